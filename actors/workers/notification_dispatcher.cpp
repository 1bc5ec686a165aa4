#include "actors/workers/notification_dispatcher.hpp"

#include <httplib.h>

#include <cstdio>
#include <future>

#include "actors/workers/conditional_workers.hpp"
#include "config/log.hpp"
#include "domain/callback_signature.hpp"
#include "domain/url.hpp"

namespace mg::workers {

namespace {

httplib::Headers headers_for(const db::notification_claim& row,
                             const notification_delivery_options& o) {
  httplib::Headers out{{"X-QTG-Notification-Kind", row.kind}};
  if (!o.secret.empty())
    // The v3 scheme of the callbacks: fixed per row, identical on retries.
    for (auto& [k, v] : domain::v3_headers(o.secret, row.timestamp, row.nonce, row.body))
      out.emplace(k, v);
  return out;
}

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

db::notification_outcome post_once(const db::notification_claim& row,
                                   const notification_delivery_options& o,
                                   const std::string& target,
                                   std::shared_ptr<httplib::Client> client) {
  db::notification_outcome out{row.id, row.lease, false, {}};
  auto started = std::chrono::steady_clock::now();
  auto res = client->Post(target.c_str(), headers_for(row, o), row.body, "application/json");
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
                   took >= o.timeout_seconds * 0.9;
  out.error = (timed_out ? "timeout after " + format_seconds(o.timeout_seconds) + " s: "
                         : std::string("request failed: ")) +
              httplib::to_string(err);
  return out;
}

/// Hard bound on one attempt: connect, then the request and the response.
std::chrono::milliseconds attempt_deadline(double timeout_seconds) {
  return std::chrono::milliseconds(static_cast<long>(2 * timeout_seconds * 1000) + 500);
}

/// Longer than any attempt can take, so a lease never runs out mid-send.
double lease_seconds(double timeout_seconds) {
  return 2 * timeout_seconds + 30;
}

} // namespace

notification_delivery_options notification_options(const config::settings& s) {
  return {s.notify_webhook_url, s.notify_secret, s.callback_timeout_seconds};
}

db::notification_outcome deliver_notification(const db::notification_claim& row,
                                              const notification_delivery_options& o) {
  auto url = domain::split_url(o.webhook_url);
  if (!url)
    return {row.id, row.lease, false, "MG_NOTIFY_WEBHOOK_URL is not an http(s) URL"};
  auto client = make_client(url->origin, o.timeout_seconds);
  auto result = std::async(std::launch::async, post_once, row, o, url->target, client);
  // A receiver that trickles bytes past the deadline is cut off.
  if (result.wait_for(attempt_deadline(o.timeout_seconds)) != std::future_status::ready)
    client->stop();
  return result.get();
}

pass_result notification_dispatch_pass(db::connection_slot& conn, const config::settings& s) {
  pass_result out;
  auto options = notification_options(s);
  auto rows = db::claim_due_notifications(conn.get(), notify_batch_size,
                                          lease_seconds(options.timeout_seconds));
  if (rows.empty())
    return out;
  // Sent concurrently, outside any transaction: the claim has committed.
  std::vector<std::future<db::notification_outcome>> sends;
  for (const auto& row : rows)
    sends.push_back(std::async(std::launch::async, deliver_notification, row, options));
  std::vector<db::notification_outcome> outcomes;
  for (auto& f : sends)
    outcomes.push_back(f.get());
  db::record_notification_outcomes(conn.get(), outcomes, s.callback_max_attempts);
  out.processed = static_cast<int>(rows.size());
  for (const auto& o : outcomes)
    if (!o.delivered)
      log::warn("notification attempt failed",
                {{"notification_id", static_cast<long long>(o.id)}, {"error", o.error}});
  return out;
}

} // namespace mg::workers

namespace mg::actors {

std::optional<worker_spec>
notification_dispatcher_worker(const std::shared_ptr<workers::engine_context>& ctx) {
  auto& s = ctx->settings;
  if (!s.notify_enabled)
    return std::nullopt;
  if (!domain::split_url(s.notify_webhook_url))
    return skipped("notification_dispatcher", "MG_NOTIFY_WEBHOOK_URL (an http(s) URL)");
  if (s.notify_secret.empty())
    log::warn("notification_dispatcher: MG_NOTIFY_SECRET is not set; notifications go unsigned");
  return worker_spec{"notification_dispatcher", worker_group::sidecar,
                     every(s, s.notify_interval_seconds), [ctx](db::connection_slot& c) {
                       return workers::notification_dispatch_pass(c, ctx->settings);
                     }};
}

} // namespace mg::actors
