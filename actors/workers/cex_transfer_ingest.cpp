#include "actors/workers/cex_transfer_ingest.hpp"

#include <algorithm>
#include <stdexcept>

#include "actors/workers/worker_table.hpp"
#include "config/log.hpp"
#include "config/metrics.hpp"
#include "persistence/cex_transfer_store.hpp"

namespace mg::workers {

namespace {

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos)
    return {};
  auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

metrics::counter& failures_metric(const std::string& venue) {
  return metrics::registry::global().get_counter(
      "movegate_cex_ingest_failures_total", "CEX transfer history pulls that failed, per venue.",
      {{"venue", venue}});
}

std::vector<std::string> checked(std::vector<std::string> venues) {
  for (auto& v : venues)
    if (!executors::is_valid_venue_name(v))
      throw std::invalid_argument("invalid venue name in MG_CEX_TRANSFER_INGEST_VENUES_CSV: '" + v +
                                  "' (1-64 of A-Z a-z 0-9 . _ -)");
  return venues;
}

} // namespace

std::vector<std::string> parse_venue_csv(const std::string& csv) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= csv.size()) {
    auto comma = csv.find(',', start);
    auto item =
        trim(csv.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (!item.empty() && std::find(out.begin(), out.end(), item) == out.end())
      out.push_back(item);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return out;
}

cex_transfer_ingest::cex_transfer_ingest(std::vector<std::string> venues,
                                         const std::string& api_url, double timeout_seconds)
    : venues_(checked(std::move(venues))), client_(api_url, timeout_seconds) {}

pass_result cex_transfer_ingest::pass(db::connection_slot& conn, cex_ingest_counts* counts) const {
  cex_ingest_counts local;
  auto& n = counts ? *counts : local;
  for (auto& venue : venues_) {
    try {
      pull_venue(conn, venue, n);
    } catch (const std::exception& e) {
      if (db::is_connection_error(e))
        throw; // the database is gone for every venue: the loop reconnects
      ++n.failed_venues;
      failures_metric(venue).inc();
      log::error("CEX transfer pull failed", {{"venue", venue}, {"error", e.what()}});
      record_failure(conn, venue, e.what());
    }
  }
  pass_result out;
  out.processed = n.inserted + n.updated + n.mismatched;
  return out;
}

void cex_transfer_ingest::pull_venue(db::connection_slot& conn, const std::string& venue,
                                     cex_ingest_counts& n) const {
  for (int page_no = 0; page_no < cex_max_pages_per_pass; ++page_no) {
    std::optional<std::string> cursor;
    {
      pqxx::work tx(conn.get());
      cursor = db::cex_cursor(tx, venue);
      tx.commit();
    }
    auto page = client_.fetch_transfers(venue, cursor); // no transaction open meanwhile
    pqxx::work tx(conn.get());
    auto c = db::upsert_cex_transfers(tx, venue, page.transfers);
    bool ours = db::advance_cex_cursor(tx, venue, cursor, page.next_cursor);
    tx.commit();
    ++n.pages;
    n.inserted += c.inserted;
    n.updated += c.updated;
    n.mismatched += c.mismatched;
    if (c.inserted + c.updated + c.mismatched > 0)
      log::info("CEX transfers ingested", {{"venue", venue},
                                           {"inserted", c.inserted},
                                           {"updated", c.updated},
                                           {"mismatched", c.mismatched}});
    if (c.mismatched > 0)
      log::warn("CEX venue changed the facts of known transfers; operator notified",
                {{"venue", venue}, {"mismatched", c.mismatched}});
    // Another process moved the cursor meanwhile: it is pulling this venue.
    if (!ours || !page.has_more || !page.next_cursor || page.next_cursor == cursor)
      return;
  }
}

void cex_transfer_ingest::record_failure(db::connection_slot& conn, const std::string& venue,
                                         const std::string& error) const {
  try {
    pqxx::work tx(conn.get());
    db::record_cex_pull_failure(tx, venue, error);
    tx.commit();
  } catch (const std::exception& e) {
    if (db::is_connection_error(e))
      throw;
    log::error("CEX pull failure not recorded", {{"venue", venue}, {"error", e.what()}});
  }
}

} // namespace mg::workers

namespace mg::actors {

std::optional<worker_pass> build_cex_transfer_ingest(const worker_build& b) {
  auto& s = b.ctx->settings;
  if (s.cex_venue_api_url.empty())
    return skipped("cex_transfer_ingest", "MG_CEX_VENUE_API_URL");
  std::shared_ptr<const workers::cex_transfer_ingest> ingest;
  try {
    ingest = std::make_shared<const workers::cex_transfer_ingest>(
        workers::parse_venue_csv(s.cex_transfer_ingest_venues_csv), s.cex_venue_api_url);
  } catch (const std::invalid_argument& e) {
    log::warn("cex_transfer_ingest settings refused", {{"error", e.what()}});
    return skipped("cex_transfer_ingest", "an http(s) MG_CEX_VENUE_API_URL and valid venue names");
  }
  return [ingest](db::connection_slot& c) {
    return ingest->pass(c);
  };
}

} // namespace mg::actors
