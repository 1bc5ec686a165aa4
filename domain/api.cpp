#include "domain/api.hpp"

#include <algorithm>

#include "domain/json_writer.hpp"

namespace mg::api {

const char* to_string(scope s) {
  switch (s) {
  case scope::create:
    return "create";
  case scope::approve:
    return "approve";
  case scope::read:
    return "read";
  case scope::admin:
    return "admin";
  }
  return "?";
}

bool caller::has(scope s) const {
  return std::find(scopes.begin(), scopes.end(), s) != scopes.end();
}

std::string error_body(const error& e) {
  json::writer w;
  w.begin_object().key("error").begin_object();
  w.member("code", e.code).member("message", e.message).key("details").begin_array();
  for (const auto& d : e.details)
    w.begin_object().member("field", d.field).member("message", d.message).end_object();
  w.end_array().end_object().end_object();
  return w.str();
}

reply error_reply(const error& e) {
  return reply{e.status, error_body(e), {}};
}

error bad_request(std::string message, std::vector<field_error> details) {
  return {400, "invalid_request", std::move(message), std::move(details)};
}
error not_found(std::string message) {
  return {404, "not_found", std::move(message), {}};
}
error unprocessable(std::string message, std::vector<field_error> details) {
  return {422, "unprocessable", std::move(message), std::move(details)};
}
error conflict(std::string message) {
  return {409, "conflict", std::move(message), {}};
}
error forbidden(std::string message) {
  return {403, "forbidden", std::move(message), {}};
}
error unavailable(std::string message) {
  return {503, "unavailable", std::move(message), {}};
}

} // namespace mg::api
