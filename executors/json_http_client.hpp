#pragma once
// The client side of the HTTP JSON protocols movegate speaks to outside
// services (EVM JSON-RPC, balance gateway, CEX venues, CCIP sidecar,
// notification webhooks): one origin, hard timeouts on connect, read and
// write, a total deadline per call and a cap on the answer's size
// (executors/bounded_http.hpp), no redirects followed. Thread-safe: each
// call uses its own connection, so a slow call never blocks another.
#include <map>
#include <string>

#include "domain/executor.hpp"
#include "domain/url.hpp"
#include "executors/bounded_http.hpp"

namespace mg::executors {

struct http_reply {
  int status = 0;
  std::string body;
};

class json_http_client {
public:
  /// `base_url` is http(s)://host[:port][/prefix]; paths given to get/post
  /// are appended to the prefix. Throws std::invalid_argument on anything
  /// else.
  json_http_client(const std::string& base_url, double timeout_seconds);

  /// Any HTTP status comes back as a reply; a transport failure (refused,
  /// timed out, reset, the whole call over 2 × timeout + 0.5 s, an answer
  /// over the cap) throws domain::executor_error naming the URL's
  /// origin and the failure, never a header or body.
  http_reply get(const std::string& path,
                 const std::map<std::string, std::string>& headers = {}) const;
  http_reply post(const std::string& path, const std::string& json_body,
                  const std::map<std::string, std::string>& headers = {}) const;

  const std::string& origin() const { return url_.origin; }
  double timeout_seconds() const { return timeout_seconds_; }
  /// Answers larger than this fail the call (default 4 MiB).
  void set_max_answer_bytes(size_t n) { max_answer_bytes_ = n; }

private:
  bounded_call call(const std::string& method, const std::string& path,
                    const std::map<std::string, std::string>& headers) const;

  domain::url_parts url_;
  double timeout_seconds_;
  size_t max_answer_bytes_ = default_max_answer_bytes;
};

} // namespace mg::executors
