#include "actors/workers/capital_transfer_followup.hpp"

#include <vector>

#include "actors/workers/worker_table.hpp"
#include "config/log.hpp"
#include "persistence/capital_transfer_store.hpp"

namespace mg::workers {

capital_verdict capital_followup_verdict(std::optional<domain::request_state> movement_state) {
  using domain::request_state;
  if (!movement_state)
    return capital_verdict::surface;
  switch (*movement_state) {
  case request_state::completed:
    return capital_verdict::complete;
  // REJECTED is terminal too (SPEC §1): such a movement never moves money.
  case request_state::failed:
  case request_state::cancelled:
  case request_state::expired:
  case request_state::rejected:
    return capital_verdict::fail;
  default:
    return capital_verdict::surface;
  }
}

pass_result capital_transfer_followup_pass(db::connection_slot& conn, const config::settings& s,
                                           capital_followup_counts* counts) {
  pass_result out;
  capital_followup_counts local;
  auto& n = counts ? *counts : local;
  pqxx::work tx(conn.get());
  auto rows = db::claim_stale_capital_transfers(
      tx, s.network_class, s.capital_transfer_stale_seconds, capital_followup_batch);
  std::vector<const char*> outcomes;
  for (auto& row : rows) {
    switch (capital_followup_verdict(row.movement_state)) {
    case capital_verdict::complete:
      db::settle_capital_transfer(tx, row.id, "completed", *row.movement_state);
      outcomes.push_back("completed");
      break;
    case capital_verdict::fail:
      db::settle_capital_transfer(tx, row.id, "failed", *row.movement_state);
      outcomes.push_back("failed");
      break;
    case capital_verdict::surface:
      db::raise_capital_transfer_attention(tx, row);
      outcomes.push_back("attention");
      break;
    }
  }
  tx.commit();
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string outcome = outcomes[i];
    (outcome == "completed" ? n.completed : outcome == "failed" ? n.failed : n.surfaced) += 1;
    auto line = outcome == "attention" ? log::warn : log::info;
    line("stale capital transfer followed up",
         {{"capital_transfer_id", rows[i].id},
          {"movement_request_id", rows[i].movement_request_id},
          {"movement_state", rows[i].movement_state ? domain::to_string(*rows[i].movement_state)
                                                    : std::string_view()},
          {"outcome", outcome}});
  }
  out.processed = static_cast<int>(rows.size());
  return out;
}

} // namespace mg::workers

namespace mg::actors {

std::optional<worker_pass> build_capital_transfer_followup(const worker_build& b) {
  // Its only client is the database: never skipped while enabled.
  return [ctx = b.ctx](db::connection_slot& c) {
    return workers::capital_transfer_followup_pass(c, ctx->settings);
  };
}

} // namespace mg::actors
