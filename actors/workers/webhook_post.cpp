#include "actors/workers/webhook_post.hpp"

#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <memory>

namespace mg::workers {

namespace {

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

std::shared_ptr<httplib::Client> make_client(const std::string& origin, double timeout) {
  auto c = std::make_shared<httplib::Client>(origin);
  auto sec = static_cast<time_t>(timeout);
  auto usec = static_cast<time_t>((timeout - static_cast<double>(sec)) * 1e6);
  c->set_connection_timeout(sec, usec);
  c->set_read_timeout(sec, usec);
  c->set_write_timeout(sec, usec);
  c->set_keep_alive(false);
  c->set_follow_location(false);
  return c;
}

/// `client` is shared with the caller, which stops it when the hard deadline
/// passes.
webhook_result post_once(const webhook_post& post, double timeout,
                         std::shared_ptr<httplib::Client> client) {
  webhook_result out;
  auto started = std::chrono::steady_clock::now();
  httplib::Headers headers(post.headers.begin(), post.headers.end());
  auto res = client->Post(post.url.target.c_str(), headers, post.body, "application/json");
  if (res) {
    out.delivered = res->status >= 200 && res->status < 300;
    if (!out.delivered)
      out.error = "HTTP " + std::to_string(res->status);
    return out;
  }
  auto err = res.error();
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // A timeout surfaces as a read/write/connect error: name it for operators.
  bool timed_out = err == httplib::Error::ConnectionTimeout || err == httplib::Error::Canceled ||
                   took >= timeout * 0.9;
  out.error = (timed_out ? "timeout after " + format_seconds(timeout) + " s: "
                         : std::string("request failed: ")) +
              httplib::to_string(err);
  return out;
}

/// Hard bound on one attempt: connect, then the request and the response.
std::chrono::milliseconds attempt_deadline(double timeout_seconds) {
  return std::chrono::milliseconds(static_cast<long>(2 * timeout_seconds * 1000) + 500);
}

} // namespace

webhook_result send_webhook(const webhook_post& post, double timeout_seconds) {
  return send_webhooks({post}, timeout_seconds).front();
}

std::vector<webhook_result> send_webhooks(const std::vector<webhook_post>& posts,
                                          double timeout_seconds) {
  struct in_flight {
    std::shared_ptr<httplib::Client> client;
    std::future<webhook_result> result;
  };
  std::vector<in_flight> sends;
  for (const auto& post : posts) {
    auto client = make_client(post.url.origin, timeout_seconds);
    sends.push_back({client, std::async(std::launch::async, post_once, std::cref(post),
                                        timeout_seconds, client)});
  }
  auto deadline = std::chrono::steady_clock::now() + attempt_deadline(timeout_seconds);
  std::vector<webhook_result> out;
  for (auto& f : sends) {
    if (f.result.wait_until(deadline) != std::future_status::ready)
      f.client->stop();
    out.push_back(f.result.get());
  }
  return out;
}

} // namespace mg::workers
