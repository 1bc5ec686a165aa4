#include "tests/support/api_client.hpp"

#include <algorithm>
#include <chrono>
#include <httplib.h>
#include <stdexcept>
#include <strings.h>

#include "domain/api_auth.hpp"
#include "domain/hash.hpp"

namespace mg::test {

std::string new_nonce() {
  return domain::random_hex(16);
}

std::string api_reply::header(const std::string& name) const {
  for (const auto& [k, v] : headers)
    if (strcasecmp(k.c_str(), name.c_str()) == 0)
      return v;
  return "";
}

api_client::api_client(int port, std::string key_id, std::string secret, std::string host)
    : port_(port), key_id_(std::move(key_id)), secret_(std::move(secret)), host_(std::move(host)) {}

api_reply api_client::request(const std::string& method, const std::string& target,
                              const std::string& body, const request_options& options) {
  httplib::Request req;
  req.method = method;
  req.path = target;
  req.body = body;
  if (!body.empty())
    req.set_header("Content-Type", "application/json");
  if (options.sign) {
    auto q = target.find('?');
    std::string path = target.substr(0, q);
    std::string query = q == std::string::npos ? "" : target.substr(q + 1);
    std::string ts = options.timestamp.value_or(
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count()));
    last_nonce_ = options.nonce.value_or(new_nonce());
    std::string sig = options.signature.value_or(api::sign_request(
        options.secret.value_or(secret_), method, path, query, body, ts, last_nonce_));
    req.set_header("X-QTG-Key-Id", options.key_id.value_or(key_id_));
    req.set_header("X-QTG-Timestamp", ts);
    req.set_header("X-QTG-Nonce", last_nonce_);
    req.set_header("X-QTG-Signature", sig);
  }
  for (const auto& name : options.omit_headers)
    req.headers.erase(name);
  for (const auto& [k, v] : options.headers) {
    req.headers.erase(k);
    req.set_header(k, v);
  }
  for (const auto& [k, v] : options.repeat_headers)
    req.headers.emplace(k, v);

  httplib::Client client(host_, port_);
  // httplib would otherwise re-encode the target (spaces, '+', ...): the
  // server must see exactly what was signed.
  client.set_url_encode(false);
  client.set_keep_alive(false);
  auto res = client.send(req);
  if (!res)
    throw std::runtime_error("api_client: " + httplib::to_string(res.error()) + " for " + method +
                             " " + target);
  api_reply out;
  out.status = res->status;
  out.body = res->body;
  for (const auto& [k, v] : res->headers)
    out.headers.emplace(k, v);
  return out;
}

} // namespace mg::test
