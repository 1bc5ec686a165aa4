#pragma once
// callback_dispatcher (reference §4, SPEC §6): every
// MG_CALLBACK_DISPATCH_INTERVAL_SECONDS, up to MG_CALLBACK_BATCH_SIZE due
// outbox rows of this network class are leased, POSTed concurrently (each
// on its own client with bounded timeouts and a hard deadline), signed per
// MG_CALLBACK_SIGNATURE_SCHEME, and their outcomes recorded. It runs in the
// sidecar group on its own connections, so a slow receiver never holds the
// node dispatcher or observer.
//
// With wake-ups on it also LISTENs on mg_callback (raised by the outbox
// insert trigger and by redeliver) and sends at once; with
// MG_WAKEUPS_ENABLED=false it is the reference's pure polling loop.
#include <chrono>
#include <memory>
#include <string>

#include "actors/workers/engine.hpp"
#include "actors/workers/host_resolver.hpp"
#include "config/settings.hpp"
#include "domain/callback_signature.hpp"
#include "persistence/callback_store.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::workers {

struct callback_delivery_options {
  domain::callback_scheme scheme = domain::callback_scheme::v3;
  std::string secret;
  double timeout_seconds = 10; // connect, write and read, each
  /// MG_CALLBACK_ALLOW_PRIVATE: deliver to whatever the host resolves to.
  bool allow_private = false;
  /// Looks the receiver's host up at each delivery (empty: resolve_host);
  /// tests make a name resolve where they want.
  host_resolver resolve;
};

/// Where one delivery to `callback_url` connects: the address its host
/// resolved to and was checked (SPEC §5), "" for an IP literal (checked as
/// written). Fails with "refused address" when any address the host has is
/// refused (unless allow_private), or when the host cannot be resolved.
struct delivery_target {
  std::string pinned_address;
  std::string error; // "" when the delivery may go ahead
};
delivery_target resolve_delivery_target(const std::string& callback_url,
                                        const callback_delivery_options& options);

callback_delivery_options delivery_options(const config::settings& s);

/// The lease a claim takes: longer than the hard deadline of one attempt.
double callback_lease_seconds(double timeout_seconds);

/// POSTs one claimed row and says how it went (no database access).
db::callback_outcome deliver_callback(const db::callback_claim& row,
                                      const callback_delivery_options& options);

/// Heartbeat last_error of a dispatcher without MG_CALLBACK_SECRET.
inline constexpr const char* callbacks_unsigned_problem =
    "MG_CALLBACK_SECRET is not set: no callback is sent (never unsigned)";

/// One batch: claim, send concurrently, record. processed = rows attempted.
/// Without a callback secret nothing is claimed or sent and the result's
/// standing_problem says so.
pass_result callback_dispatch_pass(db::connection_slot& conn, const config::settings& s);
/// The same with the delivery options given (e.g. a test resolver).
pass_result callback_dispatch_pass(db::connection_slot& conn, const config::settings& s,
                                   const callback_delivery_options& options);

/// The worker: the batch above plus, with wake-ups on, a LISTEN on its own
/// second connection so a committed row is sent at once.
class callback_dispatcher {
public:
  explicit callback_dispatcher(const config::settings& s);
  ~callback_dispatcher();

  pass_result pass(db::connection_slot& conn);

private:
  struct listener;
  bool wait_for_notification(int wait_ms);

  config::settings settings_;
  std::unique_ptr<listener> listener_;
  bool notified_ = true; // the first pass sends whatever is due
  std::chrono::steady_clock::time_point next_poll_{};
};

} // namespace mg::workers
