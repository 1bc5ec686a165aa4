#include "actors/workers/callback_dispatcher.hpp"

#include <ctime>

#include "actors/workers/webhook_post.hpp"
#include "config/log.hpp"
#include "domain/url.hpp"
#include "persistence/db.hpp"

namespace mg::workers {

using domain::split_url;

namespace {

/// How long one wake-up wait blocks the worker (shutdown is seen between
/// waits).
constexpr int listen_wait_ms = 500;

constexpr const char* bad_url = "callback_url is not an http(s) URL";
constexpr const char* refused_address = "refused address";

domain::header_list signed_headers(const db::callback_claim& row,
                                   const callback_delivery_options& o) {
  if (o.scheme == domain::callback_scheme::v3)
    // Fixed at enqueue: every retry is byte-for-byte the same delivery.
    return domain::v3_headers(o.secret, row.callback_timestamp, row.callback_nonce, row.body);
  // Standard Webhooks verifiers refuse old timestamps: sign afresh.
  return domain::standard_webhooks_headers(o.secret, row.event_id,
                                           static_cast<int64_t>(std::time(nullptr)), row.body);
}

db::callback_outcome outcome_of(const db::callback_claim& row, const webhook_result& r) {
  return {row.id, row.lease, r.delivered, r.error};
}

} // namespace

callback_delivery_options delivery_options(const config::settings& s) {
  callback_delivery_options o;
  o.scheme = domain::parse_callback_scheme(s.callback_signature_scheme)
                 .value_or(domain::callback_scheme::v3);
  o.secret = s.callback_secret;
  o.timeout_seconds = s.callback_timeout_seconds;
  o.allow_private = s.callback_allow_private;
  return o;
}

delivery_target resolve_delivery_target(const std::string& callback_url,
                                        const callback_delivery_options& options) {
  auto host = domain::url_host(callback_url);
  if (!host || host->empty())
    return {"", bad_url};
  if (host->find('%') != std::string::npos) // a zone id, an encoded name
    return {"", refused_address};
  if (auto literal = domain::is_refused_ip_literal(*host))
    return {"", *literal && !options.allow_private ? refused_address : ""};
  auto addresses = options.resolve ? options.resolve(*host) : resolve_host(*host);
  if (addresses.empty())
    return {"", "request failed: cannot resolve host"};
  if (!options.allow_private)
    for (const auto& a : addresses)
      if (domain::is_refused_ip_literal(a).value_or(true))
        return {"", refused_address};
  // Connect to an address that was checked, IPv4 first (what httplib tries
  // first when it resolves itself); no second lookup can change it.
  for (const auto& a : addresses)
    if (a.find(':') == std::string::npos)
      return {a, ""};
  return {addresses.front(), ""};
}

double callback_lease_seconds(double timeout_seconds) {
  return 2 * timeout_seconds + 30;
}

db::callback_outcome deliver_callback(const db::callback_claim& row,
                                      const callback_delivery_options& options) {
  auto url = split_url(row.callback_url);
  if (!url)
    return {row.id, row.lease, false, bad_url};
  auto target = resolve_delivery_target(row.callback_url, options);
  if (!target.error.empty())
    return {row.id, row.lease, false, target.error};
  return outcome_of(
      row, send_webhook({*url, signed_headers(row, options), row.body, target.pinned_address},
                        options.timeout_seconds));
}

pass_result callback_dispatch_pass(db::connection_slot& conn, const config::settings& s) {
  return callback_dispatch_pass(conn, s, delivery_options(s));
}

pass_result callback_dispatch_pass(db::connection_slot& conn, const config::settings& s,
                                   const callback_delivery_options& options) {
  pass_result out;
  if (options.secret.empty()) {
    out.standing_problem = callbacks_unsigned_problem;
    return out;
  }
  auto rows = db::claim_due_callbacks(conn.get(), s.network_class, s.callback_batch_size,
                                      callback_lease_seconds(options.timeout_seconds));
  if (rows.empty())
    return out;
  // The batch goes out concurrently (reference: asyncio.gather).
  std::vector<db::callback_outcome> outcomes;
  std::vector<const db::callback_claim*> sent;
  std::vector<webhook_post> posts;
  for (const auto& row : rows) {
    auto url = split_url(row.callback_url);
    if (!url) {
      outcomes.push_back({row.id, row.lease, false, bad_url});
      continue;
    }
    auto target = resolve_delivery_target(row.callback_url, options);
    if (!target.error.empty()) {
      outcomes.push_back({row.id, row.lease, false, target.error});
      continue;
    }
    sent.push_back(&row);
    posts.push_back({*url, signed_headers(row, options), row.body, target.pinned_address});
  }
  auto results = send_webhooks(posts, options.timeout_seconds);
  for (size_t i = 0; i < results.size(); ++i)
    outcomes.push_back(outcome_of(*sent[i], results[i]));
  db::record_callback_outcomes(conn.get(), outcomes);
  out.processed = static_cast<int>(rows.size());
  for (const auto& o : outcomes)
    if (!o.delivered)
      log::warn("callback attempt failed", {{"outbox_id", o.id}, {"error", o.error}});
  return out;
}

namespace {
struct listener_connection {
  std::unique_ptr<pqxx::connection> connection;
};
} // namespace

// The receiver unregisters from its connection when destroyed, so the
// connection must outlive it: held by the first base, which is built first
// and destroyed last (a member would be destroyed before the receiver base,
// leaving it to UNLISTEN on freed memory — a crash once the link is broken).
struct callback_dispatcher::listener : listener_connection, pqxx::notification_receiver {
  listener(std::unique_ptr<pqxx::connection> c)
      : listener_connection{std::move(c)}, pqxx::notification_receiver(*connection,
                                                                       db::callback_channel) {}
  ~listener() override = default;
  void operator()(const std::string&, int) override { ++received; }
  int received = 0;
};

callback_dispatcher::callback_dispatcher(const config::settings& s) : settings_(s) {}

callback_dispatcher::~callback_dispatcher() = default;

bool callback_dispatcher::wait_for_notification(int wait_ms) {
  if (!listener_ || !listener_->connection->is_open()) {
    listener_.reset();
    auto c = db::connect(
        db::with_application_name(settings_.database_url, "movegate:callback_listener"));
    listener_ = std::make_unique<listener>(std::move(c));
    notified_ = true; // rows may have been committed while nobody listened
  }
  listener_->received = 0;
  try {
    listener_->connection->await_notification(wait_ms / 1000, (wait_ms % 1000) * 1000);
  } catch (...) {
    listener_.reset();
    throw;
  }
  return listener_->received > 0;
}

pass_result callback_dispatcher::pass(db::connection_slot& conn) {
  // Nothing to send, so nothing to listen for: a plain pass per interval
  // that only reports the missing secret.
  if (!settings_.wakeups_enabled || settings_.callback_secret.empty())
    return callback_dispatch_pass(conn, settings_);
  auto now = std::chrono::steady_clock::now();
  if (notified_ || now >= next_poll_) {
    notified_ = false;
    auto r = callback_dispatch_pass(conn, settings_);
    // Next look: at the interval, or when the earliest backoff runs out,
    // or at once while a full batch suggests more are due.
    double wait = settings_.callback_dispatch_interval_seconds;
    if (auto due = db::seconds_until_next_callback(conn.get(), settings_.network_class))
      wait = std::min(wait, *due);
    if (r.processed >= settings_.callback_batch_size)
      wait = 0;
    next_poll_ =
        std::chrono::steady_clock::now() + std::chrono::microseconds(static_cast<long>(wait * 1e6));
    r.next_due_in_seconds = 0; // the loop comes straight back to listen
    return r;
  }
  auto until_poll = std::chrono::duration_cast<std::chrono::milliseconds>(next_poll_ - now).count();
  int wait_ms = static_cast<int>(std::min<long>(listen_wait_ms, std::max<long>(until_poll, 1)));
  notified_ = wait_for_notification(wait_ms);
  pass_result r;
  r.next_due_in_seconds = 0;
  return r;
}

} // namespace mg::workers
