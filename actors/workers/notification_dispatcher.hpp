#pragma once
// notification_dispatcher (reference "conditional workers", issue 5): every
// MG_NOTIFY_INTERVAL_SECONDS, up to notify_batch_size due notification_outbox
// rows are leased, POSTed concurrently to MG_NOTIFY_WEBHOOK_URL (each on its
// own client with MG_CALLBACK_TIMEOUT_SECONDS connect/read/write timeouts and
// a hard deadline), and their outcomes recorded conditional on the lease —
// the callback dispatcher's discipline: backoff 2^min(attempts, 6) s, dlq
// after MG_CALLBACK_MAX_ATTEMPTS. With MG_NOTIFY_SECRET set the body is
// signed with the v3 callback headers (timestamp and nonce fixed per row).
//
// Body: {"notification_id", "kind", "subject", "dedupe_key", "created_at",
// "data"}; receivers dedupe on notification_id (delivery is at least once).
#include <string>

#include "actors/workers/engine.hpp"
#include "config/settings.hpp"
#include "persistence/connection_slot.hpp"
#include "persistence/notification_outbox_store.hpp"

namespace mg::workers {

/// Rows per pass; a full batch makes the loop come straight back (drain).
inline constexpr int notify_batch_size = 10;

struct notification_delivery_options {
  std::string webhook_url;
  std::string secret;          // "" → unsigned
  double timeout_seconds = 10; // connect, write and read, each
};

notification_delivery_options notification_options(const config::settings& s);

/// POSTs one claimed row and says how it went (no database access); bounded
/// by a hard deadline even against a receiver that trickles bytes.
db::notification_outcome deliver_notification(const db::notification_claim& row,
                                              const notification_delivery_options& options);

/// One batch: claim, send concurrently, record. processed = rows attempted.
pass_result notification_dispatch_pass(db::connection_slot& conn, const config::settings& s);

} // namespace mg::workers
