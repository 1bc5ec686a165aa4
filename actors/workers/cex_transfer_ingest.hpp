#pragma once
// cex_transfer_ingest (sidecar; on when MG_CEX_TRANSFER_INGEST_VENUES_CSV is
// non-empty, skipped without MG_CEX_VENUE_API_URL): each pass pulls every
// listed venue's deposit/withdrawal history (executors/cex_venue_client.hpp)
// from that venue's cursor into cex_transfers, deduplicated by (venue,
// venue transfer id). Each page is stored with its cursor in one
// transaction; no transaction is open while a venue is asked. A venue that
// fails (transport, HTTP status, malformed page) is logged and counted
// (cex_transfer_cursors, movegate_cex_ingest_failures_total) and the
// other venues go on.
#include <memory>
#include <string>
#include <vector>

#include "actors/workers/engine.hpp"
#include "executors/cex_venue_client.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::workers {

/// Pages pulled per venue per pass while the venue says has_more.
inline constexpr int cex_max_pages_per_pass = 10;
/// Hard connect/read/write timeout of one venue call.
inline constexpr double cex_venue_timeout_seconds = 10;

/// The venues of MG_CEX_TRANSFER_INGEST_VENUES_CSV: trimmed, empty entries
/// dropped, duplicates kept once, order kept.
std::vector<std::string> parse_venue_csv(const std::string& csv);

struct cex_ingest_counts {
  int inserted = 0;
  int updated = 0;
  int mismatched = 0;
  int pages = 0;
  int failed_venues = 0;
};

class cex_transfer_ingest {
public:
  /// Throws std::invalid_argument for a bad URL or venue name.
  cex_transfer_ingest(std::vector<std::string> venues, const std::string& api_url,
                      double timeout_seconds = cex_venue_timeout_seconds);

  pass_result pass(db::connection_slot& conn, cex_ingest_counts* counts = nullptr) const;

private:
  /// Pulls one venue's pages; throws on the first failure (earlier pages
  /// of this pass stay stored with their cursor).
  void pull_venue(db::connection_slot& conn, const std::string& venue,
                  cex_ingest_counts& counts) const;
  void record_failure(db::connection_slot& conn, const std::string& venue,
                      const std::string& error) const;

  std::vector<std::string> venues_;
  executors::cex_venue_client client_;
};

} // namespace mg::workers
