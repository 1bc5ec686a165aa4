#pragma once
// One outgoing HTTP call to a user-chosen or external endpoint (callback
// receivers, notification webhooks, `http` executors, RPC nodes, venues)
// with the bounds SPEC §5 asks for: timeouts on connect and on each read
// and write, a total deadline on the whole call (a watchdog stops the
// client, so an answer trickled a byte at a time cannot hold the caller),
// a cap on the answer's size (the body is never buffered past it), no
// keep-alive and no redirect followed.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace mg::executors {

/// Answers larger than this are cut (JSON-RPC receipts and venue pages
/// stay far below it).
constexpr size_t default_max_answer_bytes = 4 * 1024 * 1024;

struct bounded_call {
  std::string method = "GET"; // GET or POST
  std::string origin;         // scheme://host[:port]
  std::string target;         // path?query
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;            // POST only, sent as application/json
  double timeout_seconds = 10; // connect, each read, each write
  double deadline_seconds = 0; // the whole call; 0: 2 × timeout + 0.5 s
  size_t max_answer_bytes = default_max_answer_bytes;
  /// When set, the connection goes to this IP address (the one that was
  /// checked) instead of resolving the origin's host again.
  std::string pinned_address;
};

struct bounded_answer {
  enum class failure { none, timeout, too_large, transport };
  failure failed = failure::none;
  int status = 0;    // when !failed
  std::string body;  // when !failed
  std::string error; // when failed: what went wrong, never a header or body
};

/// Runs the call on this thread (its watchdog on another).
bounded_answer call_bounded(const bounded_call& call);

} // namespace mg::executors
