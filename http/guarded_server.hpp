#pragma once
// cpp-httplib's Server with the connection handling SPEC §5 needs in front
// of hostile clients. httplib reads a request with a timeout per recv (a
// client trickling a byte every few seconds holds a worker for ever),
// keeps serving a connection after it refused a request whose body it did
// not read (the body then parses as the next request), and runs a fixed
// pool of threads (a handful of slow clients silence the listener). Here:
// - each request's headers and body must arrive within one total deadline,
//   and at most its body limit plus 64 KiB of headers is read;
// - the framing rules of http/framing.hpp are applied before the body is
//   read, and the connection is closed after any refusal or any error
//   httplib answers itself (and after a reply saying Connection: close);
// - connections get threads on demand up to a bound well above the number
//   of slow clients one must survive.
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

#include <httplib.h>

namespace mg::http {

struct listener_limits {
  /// The most any request may send as its body.
  size_t max_body_bytes = 1024 * 1024;
  std::chrono::milliseconds request_timeout{10000};
  size_t max_threads = 256;
  /// A smaller limit for some paths (decoded, as routed); unset: max_body_bytes.
  std::function<size_t(const std::string& path)> body_limit_for;
};

class guarded_server : public httplib::Server {
public:
  explicit guarded_server(listener_limits limits);

  /// Installs the pre- and post-routing hooks and the task queue; called by
  /// the constructor, again if a limit changes.
  void apply(listener_limits limits);

private:
  bool process_and_close_socket(socket_t sock) override;
  listener_limits limits_;
};

/// Called on the thread serving a request (a handler, an error handler):
/// the connection is closed once this reply is written. No-op elsewhere.
void close_connection_after_reply();

/// The request being served on this thread ran out of its total deadline
/// while its headers or body were being read.
bool request_timed_out();

} // namespace mg::http
