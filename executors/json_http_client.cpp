#include "executors/json_http_client.hpp"

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

/// One call through call_bounded: a transport failure, a timeout or an
/// oversized answer throws, naming the origin and the failure only.
http_reply send(executors::bounded_call call, const std::string& origin) {
  auto answer = call_bounded(call);
  if (answer.failed != bounded_answer::failure::none)
    throw domain::executor_error(origin + ": " + answer.error);
  return {answer.status, std::move(answer.body)};
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

bounded_call json_http_client::call(const std::string& method, const std::string& path,
                                    const std::map<std::string, std::string>& headers) const {
  bounded_call c;
  c.method = method;
  c.origin = url_.origin;
  c.target = join_path(url_.target, path);
  c.headers.assign(headers.begin(), headers.end());
  c.timeout_seconds = timeout_seconds_;
  c.max_answer_bytes = max_answer_bytes_;
  return c;
}

http_reply json_http_client::get(const std::string& path,
                                 const std::map<std::string, std::string>& headers) const {
  return send(call("GET", path, headers), url_.origin);
}

http_reply json_http_client::post(const std::string& path, const std::string& json_body,
                                  const std::map<std::string, std::string>& headers) const {
  auto c = call("POST", path, headers);
  c.body = json_body;
  return send(std::move(c), url_.origin);
}

} // namespace mg::executors
