#pragma once
// capital_transfer_requests: operator-level capital moves carried out by a
// linked movement request, and the follow-up worker's claim and writes
// (reference §12).
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "domain/states.hpp"

namespace mg::db {

struct capital_transfer_input {
  std::string network_class;
  std::string movement_request_id; // "" → not linked (yet)
  std::string from_venue;
  std::string to_venue;
  std::string asset;
  std::string amount; // decimal string > 0
  std::string requested_by;
  std::string idempotency_key; // "" → none
};

/// Inserts a pending row; the same idempotency key again returns the
/// existing row's id.
std::string create_capital_transfer(pqxx::transaction_base& tx, const capital_transfer_input& in);

/// Links a pending row to the movement request that carries it out.
bool link_capital_transfer(pqxx::transaction_base& tx, const std::string& id,
                           const std::string& movement_request_id);

struct stale_capital_transfer {
  std::string id;
  std::string movement_request_id;                     // "" when not linked
  std::optional<domain::request_state> movement_state; // none when not linked
  bool attention_raised = false;
  long age_seconds = 0;
};

/// Pending rows of this network class older than `stale_seconds` that
/// need something: their movement finished, or nobody was told yet. Oldest
/// first, locked FOR UPDATE SKIP LOCKED (only the capital rows).
std::vector<stale_capital_transfer> claim_stale_capital_transfers(pqxx::transaction_base& tx,
                                                                  const std::string& network_class,
                                                                  double stale_seconds, int limit);

/// pending → completed|failed, recording the movement state that settled it
/// and clearing the attention flag.
void settle_capital_transfer(pqxx::transaction_base& tx, const std::string& id,
                             const std::string& status, domain::request_state resolution);

/// Sets the attention flag and time, and enqueues one operator notification
/// (kind capital_transfer_stale, deduplicated per row).
void raise_capital_transfer_attention(pqxx::transaction_base& tx,
                                      const stale_capital_transfer& row);

} // namespace mg::db
