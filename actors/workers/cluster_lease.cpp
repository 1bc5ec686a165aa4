#include "actors/workers/cluster_lease.hpp"

#include <algorithm>

#include "config/log.hpp"
#include "config/metrics.hpp"
#include "persistence/cluster_store.hpp"
#include "persistence/db.hpp"

namespace mg::workers {

namespace {

/// False when the lease row is gone: this process must stop.
bool renew(pqxx::connection& c, const std::string& me) {
  pqxx::work tx(c);
  bool renewed = db::renew_lease(tx, me);
  tx.commit();
  return renewed;
}

/// Dead processes this one took over (alerts: a cluster member was lost,
/// even when its row was gone before any scrape saw it expired).
metrics::counter& takeovers() {
  static auto& c = metrics::registry::global().get_counter(
      "movegate_cluster_takeovers_total", "Dead cluster members this process took over.");
  return c;
}

/// One dead process per transaction, until none is left.
void take_over_dead_nodes(pqxx::connection& c, const engine& e, pass_result& out) {
  auto& s = e.settings;
  auto& taken_over = takeovers();
  for (;;) {
    pqxx::work tx(c);
    auto taken = db::take_over_one_dead_node(tx, s.runtime_node, s.cluster_lease_seconds,
                                             s.callback_max_attempts);
    tx.commit();
    if (!taken)
      return;
    ++out.processed;
    taken_over.inc();
    log::warn("took over a dead runtime node", {{"dead_node", taken->dead_node},
                                                {"sent_to_recovery", taken->sent_to_recovery},
                                                {"refenced", taken->refenced}});
    for (auto& id : taken->requests)
      out.reconcile.push_back(id);
    out.wake_recovery |= taken->sent_to_recovery > 0;
    out.wake_observer |= taken->refenced > 0;
  }
}

/// Just past the clock edge, so the look finds the lease expired.
constexpr double expiry_margin_seconds = 0.01;

/// When to look again for the suspects' sake: right after the first of
/// their leases runs out. Suspects that are gone (taken over, or left) are
/// dropped.
std::optional<double> next_look_for_suspects(pqxx::connection& c, const engine& e,
                                             suspect_peers& suspects) {
  std::optional<double> next;
  auto names = suspects.list();
  if (names.empty())
    return next;
  pqxx::read_transaction tx(c);
  for (auto& name : names) {
    auto remaining = db::lease_remaining_seconds(tx, name, e.settings.cluster_lease_seconds);
    if (!remaining) {
      suspects.remove(name);
      continue;
    }
    // Expired but still there: another survivor holds its row (SKIP
    // LOCKED); look again shortly in case that survivor dies too.
    double in = std::max(*remaining, 0.0) + expiry_margin_seconds;
    next = next ? std::min(*next, in) : in;
  }
  return next;
}

} // namespace

pass_result cluster_lease_pass(db::connection_slot& conn, const engine& e, suspect_peers& suspects,
                               lease_continuity& continuity) {
  pass_result out;
  auto& s = e.settings;
  bool renewed = false;
  try {
    if (!renew(conn.get(), s.runtime_node)) {
      log::error("cluster lease lost: another process declared this one dead; stopping");
      out.fatal = "cluster lease lost: runtime node " + s.runtime_node +
                  " was declared dead and its work taken over";
      return out;
    }
    renewed = true;
    auto now = lease_continuity::clock::now();
    if (continuity.renewed(now, s.cluster_lease_seconds))
      log::info("cluster lease renewed after an interruption; no peer is declared dead before"
                " this process has renewed for a full lease",
                {{"lease_seconds", s.cluster_lease_seconds}});
    if (auto wait = continuity.takeovers_wait_seconds(now, s.cluster_lease_seconds)) {
      out.next_due_in_seconds = *wait + expiry_margin_seconds;
      return out;
    }
    take_over_dead_nodes(conn.get(), e, out);
    out.next_due_in_seconds = next_look_for_suspects(conn.get(), e, suspects);
  } catch (const std::exception& ex) {
    // A lost connection after the renewal may be an outage the next renewal
    // no longer sees.
    if (!renewed || db::is_connection_error(ex))
      continuity.interrupted();
    throw;
  }
  return out;
}

} // namespace mg::workers
