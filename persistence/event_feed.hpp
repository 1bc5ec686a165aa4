#pragma once
// Read side of the cluster event push (SPEC §6 events over §8 actors):
// new movement_events rows in `seq` order, each as the JSON item GET
// /v3/movements/{id}/events gives for it. Read only, short statements.
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

namespace mg::db {

struct fed_event {
  uint64_t seq = 0;
  std::string request_id;
  std::string event_id;
  /// {"kind": "event", "id", "event_type", "node_key", "occurred_at", "payload"}
  std::string json;
};

/// Events with seq > `after_seq` (and, when `request_id` is not empty, of
/// that request only), oldest first, at most `limit`.
std::vector<fed_event> events_after(pqxx::transaction_base& tx, uint64_t after_seq,
                                    const std::string& request_id, int limit);

/// The highest seq written so far (0: none).
uint64_t last_event_seq(pqxx::transaction_base& tx);

/// The seq of event `event_id`, nullopt when there is none (or it is not
/// of `request_id` when that is not empty).
std::optional<uint64_t> event_seq(pqxx::transaction_base& tx, const std::string& event_id,
                                  const std::string& request_id);

} // namespace mg::db
