#include "actors/own_name.hpp"

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "actors/cluster/movement_api.hpp"
#include "actors/proc_identity.hpp"
#include "config/log.hpp"
#include "persistence/db.hpp"

namespace mg::actors {

namespace {

/// A wait that never ends before the lease does is logged this often.
constexpr double wait_log_interval_seconds = 3;
/// Look again at least this often: the holder may leave cleanly, or a
/// survivor may take its row over, before the lease runs out.
constexpr double max_wait_step_seconds = 1;
/// Just past the lease's end, so the next look finds it expired.
constexpr double expiry_margin_seconds = 0.05;

std::string seconds_text(double s) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << s;
  return out.str();
}

bool sleep_seconds(double s) {
  std::this_thread::sleep_for(std::chrono::duration<double>(s));
  return true;
}

name_attempt take_over(pqxx::work& tx, const std::string& runtime_node, const name_place& place,
                       int callback_max_attempts, const domain::process_identity& me,
                       std::string reason) {
  name_attempt out;
  out.handed_over = db::hand_over_claims(tx, runtime_node, callback_max_attempts);
  db::reregister_cluster_node(tx, runtime_node, place.host, place.cluster_port, me);
  tx.commit();
  out.joined = true;
  out.reason = std::move(reason);
  return out;
}

} // namespace

name_attempt try_claim_name(pqxx::connection& conn, const std::string& runtime_node,
                            const name_place& place, double lease_seconds,
                            int callback_max_attempts, const domain::process_identity& me) {
  pqxx::work tx(conn);
  for (;;) {
    if (db::insert_cluster_node(tx, runtime_node, place.host, place.cluster_port, me)) {
      tx.commit();
      name_attempt out;
      out.joined = true;
      return out;
    }
    auto holder = db::lock_name_holder(tx, runtime_node, lease_seconds);
    if (!holder)
      continue; // a survivor deleted it between the INSERT and the lock
    if (!holder->lease_live)
      return take_over(tx, runtime_node, place, callback_max_attempts, me,
                       "the previous holder's lease expired");
    auto verdict = domain::judge_holder(me, holder->identity, look_up_pid(holder->identity.pid));
    using kind = domain::holder_verdict::kind;
    if (verdict.verdict == kind::dead)
      return take_over(tx, runtime_node, place, callback_max_attempts, me, verdict.reason);
    if (verdict.verdict == kind::alive)
      throw std::runtime_error("runtime node '" + runtime_node + "' is held by a live process (" +
                               verdict.reason + ", lease renewed " +
                               seconds_text(holder->renewed_seconds_ago) +
                               " s ago); refusing to start under the same MG_RUNTIME_NODE");
    name_attempt out;
    out.reason = verdict.reason;
    out.lease_remaining_seconds = holder->lease_remaining_seconds;
    return out; // the transaction rolls back: nothing changed
  }
}

std::optional<name_attempt> claim_runtime_node(const config::settings& s, const name_wait& wait) {
  auto addr = parse_cluster_address(s.cluster_addr);
  const name_place place{addr.host, addr.port};
  const auto me = this_process_identity();
  if (!me.complete())
    log::warn("cannot read this process's identity: a restart under its name waits out the lease",
              {{"machine_id_known", !me.machine_id.empty()},
               {"boot_id_known", !me.boot_id.empty()},
               {"pid_namespace_known", me.pid_namespace != 0},
               {"start_time_known", me.start_time != 0}});
  auto conn = db::connect(s.database_url);
  bool waited = false;
  auto last_log = std::chrono::steady_clock::time_point{};
  for (;;) {
    auto attempt = try_claim_name(*conn, s.runtime_node, place, s.cluster_lease_seconds,
                                  s.callback_max_attempts, me);
    if (attempt.joined)
      return attempt;
    if (!waited && wait.on_first_wait)
      wait.on_first_wait();
    waited = true;
    auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_log).count() >= wait_log_interval_seconds) {
      last_log = now;
      log::warn("waiting for the lease of this runtime node to expire: its holder cannot be "
                "proven dead",
                {{"reason", attempt.reason},
                 {"lease_remaining_seconds", attempt.lease_remaining_seconds}});
    }
    double step = std::clamp(attempt.lease_remaining_seconds + expiry_margin_seconds,
                             expiry_margin_seconds, max_wait_step_seconds);
    if (!(wait.pause ? wait.pause(step) : sleep_seconds(step)))
      return std::nullopt;
  }
}

} // namespace mg::actors
