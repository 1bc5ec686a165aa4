#include "actors/workers/callback_dispatcher.hpp"

#include <httplib.h>

#include <ctime>
#include <future>
#include <thread>

#include "config/log.hpp"
#include "domain/url.hpp"
#include "persistence/db.hpp"

namespace mg::workers {

using domain::split_url;
using domain::url_parts;

namespace {

/// How long one wake-up wait blocks the worker (shutdown is seen between waits).
constexpr int listen_wait_ms = 500;

httplib::Headers signed_headers(const db::callback_claim& row, const callback_delivery_options& o) {
  domain::header_list h;
  if (o.scheme == domain::callback_scheme::v3)
    // Fixed at enqueue: every retry is byte-for-byte the same delivery.
    h = domain::v3_headers(o.secret, row.callback_timestamp, row.callback_nonce, row.body);
  else
    // Standard Webhooks verifiers refuse old timestamps: sign afresh.
    h = domain::standard_webhooks_headers(o.secret, row.event_id,
                                          static_cast<int64_t>(std::time(nullptr)), row.body);
  httplib::Headers out;
  for (auto& [k, v] : h)
    out.emplace(k, v);
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

/// One attempt on its own client. `client` is shared with the caller, which
/// stops it when the hard deadline passes.
db::callback_outcome post_once(const db::callback_claim& row, const callback_delivery_options& o,
                               const url_parts& url, std::shared_ptr<httplib::Client> client) {
  db::callback_outcome out{row.id, row.lease, false, {}};
  auto started = std::chrono::steady_clock::now();
  auto res = client->Post(url.target.c_str(), signed_headers(row, o), row.body, "application/json");
  if (res) {
    out.delivered = res->status >= 200 && res->status < 300;
    if (!out.delivered)
      out.error = "HTTP " + std::to_string(res->status);
    return out;
  }
  auto err = res.error();
  // A timeout surfaces as a read/write/connect error: name it for operators.
  bool timed_out = err == httplib::Error::ConnectionTimeout || err == httplib::Error::Canceled ||
                   seconds_since(started) >= o.timeout_seconds * 0.9;
  out.error = (timed_out ? "timeout after " + format_seconds(o.timeout_seconds) + " s: "
                         : std::string("request failed: ")) +
              httplib::to_string(err);
  return out;
}

std::shared_ptr<httplib::Client> make_client(const url_parts& url,
                                             const callback_delivery_options& o) {
  auto c = std::make_shared<httplib::Client>(url.origin);
  auto sec = static_cast<time_t>(o.timeout_seconds);
  auto usec = static_cast<time_t>((o.timeout_seconds - static_cast<double>(sec)) * 1e6);
  c->set_connection_timeout(sec, usec);
  c->set_read_timeout(sec, usec);
  c->set_write_timeout(sec, usec);
  c->set_keep_alive(false);
  c->set_follow_location(false);
  return c;
}

/// Hard bound on one attempt: connect, then the request and the response.
std::chrono::milliseconds attempt_deadline(double timeout_seconds) {
  return std::chrono::milliseconds(static_cast<long>(2 * timeout_seconds * 1000) + 500);
}

} // namespace

callback_delivery_options delivery_options(const config::settings& s) {
  callback_delivery_options o;
  o.scheme = domain::parse_callback_scheme(s.callback_signature_scheme)
                 .value_or(domain::callback_scheme::v3);
  o.secret = s.callback_secret;
  o.timeout_seconds = s.callback_timeout_seconds;
  return o;
}

double callback_lease_seconds(double timeout_seconds) {
  return 2 * timeout_seconds + 30;
}

db::callback_outcome deliver_callback(const db::callback_claim& row,
                                      const callback_delivery_options& options) {
  auto url = split_url(row.callback_url);
  if (!url)
    return {row.id, row.lease, false, "callback_url is not an http(s) URL"};
  return post_once(row, options, *url, make_client(*url, options));
}

pass_result callback_dispatch_pass(db::connection_slot& conn, const config::settings& s) {
  pass_result out;
  auto options = delivery_options(s);
  auto rows = db::claim_due_callbacks(conn.get(), s.network_class, s.callback_batch_size,
                                      callback_lease_seconds(options.timeout_seconds));
  if (rows.empty())
    return out;
  // The batch goes out concurrently (reference: asyncio.gather), each attempt
  // on its own client; a receiver that trickles bytes past the deadline is
  // cut off by stopping its client.
  struct in_flight {
    std::shared_ptr<httplib::Client> client;
    std::future<db::callback_outcome> result;
  };
  std::vector<db::callback_outcome> outcomes;
  std::vector<in_flight> sends;
  for (const auto& row : rows) {
    auto url = split_url(row.callback_url);
    if (!url) {
      outcomes.push_back({row.id, row.lease, false, "callback_url is not an http(s) URL"});
      continue;
    }
    auto client = make_client(*url, options);
    sends.push_back(
        {client, std::async(std::launch::async, post_once, row, options, *url, client)});
  }
  auto deadline = std::chrono::steady_clock::now() + attempt_deadline(options.timeout_seconds);
  for (auto& f : sends) {
    if (f.result.wait_until(deadline) != std::future_status::ready)
      f.client->stop();
    outcomes.push_back(f.result.get());
  }
  db::record_callback_outcomes(conn.get(), outcomes);
  out.processed = static_cast<int>(rows.size());
  for (const auto& o : outcomes)
    if (!o.delivered)
      log::warn("callback attempt failed", {{"outbox_id", o.id}, {"error", o.error}});
  return out;
}

struct callback_dispatcher::listener : pqxx::notification_receiver {
  listener(std::unique_ptr<pqxx::connection> c)
      : pqxx::notification_receiver(*c, db::callback_channel), conn(std::move(c)) {}
  ~listener() override = default;
  void operator()(const std::string&, int) override { ++received; }
  // The receiver unregisters from its connection when destroyed: the
  // connection must outlive it, hence held here and released last.
  std::unique_ptr<pqxx::connection> conn;
  int received = 0;
};

callback_dispatcher::callback_dispatcher(const config::settings& s) : settings_(s) {}

callback_dispatcher::~callback_dispatcher() = default;

bool callback_dispatcher::wait_for_notification(int wait_ms) {
  if (!listener_ || !listener_->conn->is_open()) {
    listener_.reset();
    auto c = db::connect(
        db::with_application_name(settings_.database_url, "movegate:callback_listener"));
    listener_ = std::make_unique<listener>(std::move(c));
    notified_ = true; // rows may have been committed while nobody listened
  }
  listener_->received = 0;
  try {
    listener_->conn->await_notification(wait_ms / 1000, (wait_ms % 1000) * 1000);
  } catch (...) {
    listener_.reset();
    throw;
  }
  return listener_->received > 0;
}

pass_result callback_dispatcher::pass(db::connection_slot& conn) {
  if (!settings_.wakeups_enabled)
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
