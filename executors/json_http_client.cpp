#include "executors/json_http_client.hpp"

#include <httplib.h>

#include <stdexcept>

namespace mg::executors {

namespace {

std::string join_path(const std::string& prefix, const std::string& path) {
  std::string base = prefix == "/" ? "" : prefix;
  if (!base.empty() && base.back() == '/')
    base.pop_back();
  if (path.empty() || path[0] != '/')
    return base + "/" + path;
  return base + path;
}

httplib::Client make_client(const std::string& origin, double timeout) {
  httplib::Client c(origin);
  auto sec = static_cast<time_t>(timeout);
  auto usec = static_cast<time_t>((timeout - static_cast<double>(sec)) * 1e6);
  c.set_connection_timeout(sec, usec);
  c.set_read_timeout(sec, usec);
  c.set_write_timeout(sec, usec);
  c.set_keep_alive(false);
  c.set_follow_location(false);
  return c;
}

httplib::Headers to_headers(const std::map<std::string, std::string>& h) {
  return httplib::Headers(h.begin(), h.end());
}

http_reply reply_of(const httplib::Result& res, const std::string& origin) {
  if (!res)
    throw domain::executor_error(origin + ": " + httplib::to_string(res.error()));
  return {res->status, res->body};
}

} // namespace

json_http_client::json_http_client(const std::string& base_url, double timeout_seconds)
    : timeout_seconds_(timeout_seconds) {
  auto parts = domain::split_url(base_url);
  if (!parts)
    throw std::invalid_argument("not an http(s) URL");
  url_ = *parts;
  if (auto q = url_.target.find('?'); q != std::string::npos)
    url_.target.resize(q);
}

http_reply json_http_client::get(const std::string& path,
                                 const std::map<std::string, std::string>& headers) const {
  auto c = make_client(url_.origin, timeout_seconds_);
  return reply_of(c.Get(join_path(url_.target, path).c_str(), to_headers(headers)), url_.origin);
}

http_reply json_http_client::post(const std::string& path, const std::string& json_body,
                                  const std::map<std::string, std::string>& headers) const {
  auto c = make_client(url_.origin, timeout_seconds_);
  return reply_of(c.Post(join_path(url_.target, path).c_str(), to_headers(headers), json_body,
                         "application/json"),
                  url_.origin);
}

} // namespace mg::executors
