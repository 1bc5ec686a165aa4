#pragma once
// The HTTP side of both outbox dispatchers (callbacks, notifications): a JSON
// body POSTed on a fresh client per attempt through executors::call_bounded
// (no keep-alive, no redirects, connect/read/write timeouts, a hard
// deadline on top, because a receiver that trickles bytes resets the read
// timeout, and a cap on the answer, of which only the status matters).
#include <string>
#include <vector>

#include "domain/callback_signature.hpp"
#include "domain/url.hpp"

namespace mg::workers {

struct webhook_post {
  domain::url_parts url;
  domain::header_list headers;
  std::string body; // sent as application/json
  /// The checked address to connect to ("" resolves the URL's host).
  std::string pinned_address;
};

/// What a receiver may answer: the status is read, the body dropped.
constexpr size_t max_webhook_answer_bytes = 64 * 1024;

struct webhook_result {
  bool delivered = false; // a 2xx reply
  /// When !delivered: "HTTP <status>", "timeout after <s> s: <why>",
  /// "answer over <n> bytes" or "request failed: <why>" (never a header or
  /// the body).
  std::string error;
};

/// One attempt, `timeout_seconds` for each of connect, write and read.
webhook_result send_webhook(const webhook_post& post, double timeout_seconds);

/// The attempts go out concurrently under one shared hard deadline, so a
/// batch takes no longer than its slowest receiver is allowed; results in
/// the order of `posts`.
std::vector<webhook_result> send_webhooks(const std::vector<webhook_post>& posts,
                                          double timeout_seconds);

} // namespace mg::workers
