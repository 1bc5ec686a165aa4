#include "actors/workers/notification_dispatcher.hpp"

#include "actors/workers/webhook_post.hpp"
#include "actors/workers/worker_table.hpp"
#include "config/log.hpp"
#include "domain/callback_signature.hpp"
#include "domain/url.hpp"

namespace mg::workers {

namespace {

constexpr const char* bad_url = "MG_NOTIFY_WEBHOOK_URL is not an http(s) URL";

domain::header_list headers_for(const db::notification_claim& row,
                                const notification_delivery_options& o) {
  domain::header_list out{{"X-QTG-Notification-Kind", row.kind}};
  if (!o.secret.empty())
    // The v3 scheme of the callbacks: fixed per row, identical on retries.
    for (auto& h : domain::v3_headers(o.secret, row.timestamp, row.nonce, row.body))
      out.push_back(std::move(h));
  return out;
}

db::notification_outcome outcome_of(const db::notification_claim& row, const webhook_result& r) {
  return {row.id, row.lease, r.delivered, r.error};
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
    return {row.id, row.lease, false, bad_url};
  return outcome_of(row,
                    send_webhook({*url, headers_for(row, o), row.body, {}}, o.timeout_seconds));
}

pass_result notification_dispatch_pass(db::connection_slot& conn, const config::settings& s) {
  pass_result out;
  auto options = notification_options(s);
  auto rows = db::claim_due_notifications(conn.get(), notify_batch_size,
                                          lease_seconds(options.timeout_seconds));
  if (rows.empty())
    return out;
  // Sent concurrently, outside any transaction: the claim has committed.
  std::vector<webhook_result> results(rows.size(), {false, bad_url});
  if (auto url = domain::split_url(options.webhook_url)) {
    std::vector<webhook_post> posts;
    for (const auto& row : rows)
      posts.push_back({*url, headers_for(row, options), row.body, {}});
    results = send_webhooks(posts, options.timeout_seconds);
  }
  std::vector<db::notification_outcome> outcomes;
  for (size_t i = 0; i < rows.size(); ++i)
    outcomes.push_back(outcome_of(rows[i], results[i]));
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

std::optional<worker_pass> build_notification_dispatcher(const worker_build& b) {
  auto& s = b.ctx->settings;
  if (!domain::split_url(s.notify_webhook_url))
    return skipped("notification_dispatcher", "MG_NOTIFY_WEBHOOK_URL (an http(s) URL)");
  if (s.notify_secret.empty())
    log::warn("notification_dispatcher: MG_NOTIFY_SECRET is not set; "
              "notifications go unsigned");
  return [ctx = b.ctx](db::connection_slot& c) {
    return workers::notification_dispatch_pass(c, ctx->settings);
  };
}

} // namespace mg::actors
