#include "actors/workers/webhook_post.hpp"

#include <future>

#include "executors/bounded_http.hpp"

namespace mg::workers {

namespace {

webhook_result post_once(const webhook_post& post, double timeout) {
  executors::bounded_call call;
  call.method = "POST";
  call.origin = post.url.origin;
  call.target = post.url.target;
  call.headers.assign(post.headers.begin(), post.headers.end());
  call.body = post.body;
  call.timeout_seconds = timeout;
  call.max_answer_bytes = max_webhook_answer_bytes;
  call.pinned_address = post.pinned_address;
  auto answer = executors::call_bounded(call);
  webhook_result out;
  using failure = executors::bounded_answer::failure;
  switch (answer.failed) {
  case failure::none:
    out.delivered = answer.status >= 200 && answer.status < 300;
    if (!out.delivered)
      out.error = "HTTP " + std::to_string(answer.status);
    break;
  case failure::timeout:
  case failure::too_large:
    out.error = answer.error;
    break;
  case failure::transport:
    out.error = "request failed: " + answer.error;
    break;
  }
  return out;
}

} // namespace

webhook_result send_webhook(const webhook_post& post, double timeout_seconds) {
  return post_once(post, timeout_seconds);
}

std::vector<webhook_result> send_webhooks(const std::vector<webhook_post>& posts,
                                          double timeout_seconds) {
  // Each attempt has its own hard deadline, and they all start together:
  // the batch takes no longer than its slowest receiver is allowed.
  std::vector<std::future<webhook_result>> sends;
  for (const auto& post : posts)
    sends.push_back(std::async(std::launch::async, post_once, std::cref(post), timeout_seconds));
  std::vector<webhook_result> out;
  for (auto& f : sends)
    out.push_back(f.get());
  return out;
}

} // namespace mg::workers
