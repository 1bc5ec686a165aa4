#pragma once
// cex_transfers (one row per (venue, venue transfer id)) and the per-venue
// pull cursor with its success/failure bookkeeping (cex_transfer_cursors).
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "domain/venue_replies.hpp"

namespace mg::db {

/// Validated before it gets here: see domain/venue_replies.hpp.
using domain::cex_transfer;

struct upsert_counts {
  int inserted = 0;
  int updated = 0; // status / tx hash / network / address changed
  int unchanged = 0;
  int mismatched = 0; // direction, asset or amount differ from the stored row
};

/// Inserts new transfers and follows status changes of known ones; the
/// facts (direction, asset, amount) of a known transfer are never
/// overwritten: a venue that changes them gets an operator notification
/// (kind cex_transfer_mismatch) instead.
upsert_counts upsert_cex_transfers(pqxx::transaction_base& tx, const std::string& venue,
                                   const std::vector<cex_transfer>& transfers);

/// The venue's cursor row (created on first use); nullopt cursor = start.
std::optional<std::string> cex_cursor(pqxx::transaction_base& tx, const std::string& venue);

/// Moves the cursor from `expected` to `next` and records a successful
/// pull, only if nobody moved it meanwhile (compare-and-set): false when
/// another process advanced it first (its pull covers ours; the transfers
/// are deduplicated anyway).
bool advance_cex_cursor(pqxx::transaction_base& tx, const std::string& venue,
                        const std::optional<std::string>& expected,
                        const std::optional<std::string>& next);

/// Counts a failed pull of `venue` (error text from the peer, never a secret).
void record_cex_pull_failure(pqxx::transaction_base& tx, const std::string& venue,
                             const std::string& error);

} // namespace mg::db
