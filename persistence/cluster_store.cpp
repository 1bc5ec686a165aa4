#include "persistence/cluster_store.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "domain/executor.hpp"
#include "persistence/db.hpp"
#include "persistence/events.hpp"
#include "persistence/node_store.hpp"

namespace mg::db {

namespace {

const statement lock_request{"mg_cluster_lock_request",
                             "SELECT 1 FROM movement_requests WHERE id = $1 FOR UPDATE"};

/// Locks one node still claimed by `runtime_node`; its state, or none when
/// the node moved on meanwhile.
std::optional<domain::node_state> lock_claimed_node(pqxx::transaction_base& tx,
                                                    const std::string& node_id,
                                                    const std::string& runtime_node) {
  static const statement q{"mg_cluster_lock_node",
                           "SELECT node_state FROM movement_request_nodes WHERE id = $1"
                           " AND claimed_by = $2"
                           " AND node_state IN ('SUBMITTING', 'SUBMITTED', 'OBSERVING')"
                           " FOR UPDATE"};
  auto r = exec(tx, q, node_id, runtime_node);
  if (r.empty())
    return std::nullopt;
  return node_state_of(r[0][0]);
}

void clear_claim(pqxx::transaction_base& tx, const std::string& node_id) {
  static const statement q{"mg_cluster_clear_claim",
                           "UPDATE movement_request_nodes SET claimed_by = NULL WHERE id = $1"};
  exec(tx, q, node_id);
}

/// SUBMITTING with nobody left to commit the submit result: recovery asks
/// the provider (executor.recover on the idempotency key) right away.
void send_to_recovery(pqxx::transaction_base& tx, const std::string& node_id,
                      const std::string& runtime_node, event_batch& events) {
  auto n = load_node(tx, node_id);
  if (!n)
    return;
  node_update u;
  u.next_state = domain::node_state::unknown;
  u.error_code = "RUNTIME_NODE_LOST";
  u.error_detail = "runtime node '" + runtime_node + "' lost its cluster lease mid-submit";
  u.token = claim_token_change::rotate;
  apply_node_update(tx, *n, u, events);
  clear_claim(tx, node_id);
}

/// SUBMITTED/OBSERVING: any observer may follow it up; a new token only
/// fences a late write of the dead process.
void refence(pqxx::transaction_base& tx, const std::string& node_id) {
  static const statement q{"mg_cluster_refence",
                           "UPDATE movement_request_nodes SET claim_token = gen_random_uuid(),"
                           " claimed_by = NULL, updated_at = clock_timestamp() WHERE id = $1"};
  exec(tx, q, node_id);
}

/// The identity as statement parameters; a part not known is NULL.
struct identity_params {
  explicit identity_params(const domain::process_identity& me)
      : machine_id(me.machine_id), boot_id(me.boot_id),
        pid_namespace(me.pid_namespace ? std::to_string(me.pid_namespace) : ""),
        pid(me.pid > 0 ? std::to_string(me.pid) : ""),
        start_time(me.start_time ? std::to_string(me.start_time) : "") {}
  std::string machine_id, boot_id, pid_namespace, pid, start_time;
};

std::uint64_t u64_or_zero(const pqxx::field& f) {
  return f.is_null() ? 0 : f.as<std::uint64_t>();
}

} // namespace

takeover hand_over_claims(pqxx::transaction_base& tx, const std::string& runtime_node,
                          int callback_max_attempts) {
  static const statement claimed{
      "mg_cluster_claimed_nodes",
      "SELECT request_id::text, id::text FROM movement_request_nodes WHERE claimed_by = $1"
      " AND node_state IN ('SUBMITTING', 'SUBMITTED', 'OBSERVING')"
      " ORDER BY request_id, position"};
  std::map<std::string, std::vector<std::string>> by_request;
  for (auto row : exec(tx, claimed, runtime_node))
    by_request[str(row[0])].push_back(str(row[1]));
  takeover out;
  out.dead_node = runtime_node;
  for (auto& [request_id, nodes] : by_request) {
    exec(tx, lock_request, request_id); // project lock order: request, then its nodes
    event_batch events(request_id, callback_max_attempts);
    out.requests.push_back(request_id);
    for (auto& id : nodes) {
      auto state = lock_claimed_node(tx, id, runtime_node);
      if (state == domain::node_state::submitting) {
        send_to_recovery(tx, id, runtime_node, events);
        ++out.sent_to_recovery;
      } else if (state) {
        refence(tx, id);
        ++out.refenced;
      }
    }
    events.flush(tx);
  }
  return out;
}

bool insert_cluster_node(pqxx::transaction_base& tx, const std::string& runtime_node,
                         const std::string& host, int cluster_port,
                         const domain::process_identity& me) {
  static const statement q{
      "mg_cluster_insert",
      "INSERT INTO cluster_nodes (runtime_node, host, cluster_port, started_at, last_seen_at,"
      " holder_machine_id, holder_boot_id, holder_pid_namespace, holder_pid, holder_start_time)"
      " VALUES ($1, $2, $3, clock_timestamp(), clock_timestamp(), $4, $5, $6, $7, $8)"
      " ON CONFLICT (runtime_node) DO NOTHING RETURNING 1"};
  identity_params p(me);
  return !exec(tx, q, runtime_node, host, cluster_port, null_if_empty(p.machine_id),
               null_if_empty(p.boot_id), null_if_empty(p.pid_namespace), null_if_empty(p.pid),
               null_if_empty(p.start_time))
              .empty();
}

std::optional<name_holder> lock_name_holder(pqxx::transaction_base& tx,
                                            const std::string& runtime_node, double lease_seconds) {
  static const statement q{
      "mg_cluster_lock_holder",
      "SELECT last_seen_at > clock_timestamp() - make_interval(secs => $2),"
      " extract(epoch FROM clock_timestamp() - last_seen_at)::float8,"
      " extract(epoch FROM last_seen_at + make_interval(secs => $2) - clock_timestamp())::float8,"
      " holder_machine_id, holder_boot_id, holder_pid_namespace, holder_pid, holder_start_time"
      " FROM cluster_nodes WHERE runtime_node = $1 FOR UPDATE"};
  auto r = exec(tx, q, runtime_node, lease_seconds);
  if (r.empty())
    return std::nullopt;
  name_holder h;
  h.lease_live = r[0][0].as<bool>();
  h.renewed_seconds_ago = r[0][1].as<double>();
  h.lease_remaining_seconds = r[0][2].as<double>();
  h.identity.machine_id = str(r[0][3]);
  h.identity.boot_id = str(r[0][4]);
  h.identity.pid_namespace = u64_or_zero(r[0][5]);
  h.identity.pid = r[0][6].is_null() ? 0 : r[0][6].as<std::int64_t>();
  h.identity.start_time = u64_or_zero(r[0][7]);
  return h;
}

void reregister_cluster_node(pqxx::transaction_base& tx, const std::string& runtime_node,
                             const std::string& host, int cluster_port,
                             const domain::process_identity& me) {
  static const statement q{
      "mg_cluster_reregister",
      "UPDATE cluster_nodes SET host = $2, cluster_port = $3, started_at = clock_timestamp(),"
      " last_seen_at = clock_timestamp(), holder_machine_id = $4, holder_boot_id = $5,"
      " holder_pid_namespace = $6, holder_pid = $7, holder_start_time = $8"
      " WHERE runtime_node = $1"};
  identity_params p(me);
  exec(tx, q, runtime_node, host, cluster_port, null_if_empty(p.machine_id),
       null_if_empty(p.boot_id), null_if_empty(p.pid_namespace), null_if_empty(p.pid),
       null_if_empty(p.start_time));
}

void record_cluster_port(pqxx::connection& conn, const std::string& runtime_node, int port) {
  pqxx::work tx(conn);
  tx.exec_params("UPDATE cluster_nodes SET cluster_port = $2 WHERE runtime_node = $1", runtime_node,
                 port);
  tx.commit();
}

bool renew_lease(pqxx::transaction_base& tx, const std::string& runtime_node) {
  static const statement q{"mg_cluster_renew",
                           "UPDATE cluster_nodes SET last_seen_at = clock_timestamp()"
                           " WHERE runtime_node = $1 RETURNING 1"};
  return !exec(tx, q, runtime_node).empty();
}

std::vector<cluster_peer> live_peers(pqxx::transaction_base& tx, const std::string& me,
                                     double lease_seconds) {
  static const statement q{"mg_cluster_live_peers",
                           "SELECT runtime_node, host, cluster_port FROM cluster_nodes"
                           " WHERE runtime_node <> $1 AND cluster_port IS NOT NULL"
                           " AND last_seen_at >= clock_timestamp() - make_interval(secs => $2)"
                           " ORDER BY runtime_node"};
  std::vector<cluster_peer> out;
  for (const auto& row : exec(tx, q, me, lease_seconds))
    out.push_back({str(row[0]), str(row[1]), row[2].as<int>()});
  return out;
}

std::optional<double> lease_remaining_seconds(pqxx::transaction_base& tx,
                                              const std::string& runtime_node,
                                              double lease_seconds) {
  static const statement q{
      "mg_cluster_lease_remaining",
      "SELECT EXTRACT(EPOCH FROM last_seen_at + make_interval(secs => $2) - clock_timestamp())"
      "::float8 FROM cluster_nodes WHERE runtime_node = $1"};
  auto r = exec(tx, q, runtime_node, lease_seconds);
  if (r.empty())
    return std::nullopt;
  return r[0][0].as<double>();
}

void leave_cluster(pqxx::connection& conn, const std::string& runtime_node) {
  static const statement q{"mg_cluster_leave", "DELETE FROM cluster_nodes WHERE runtime_node = $1"};
  pqxx::work tx(conn);
  exec(tx, q, runtime_node);
  tx.commit();
}

std::optional<takeover> take_over_one_dead_node(pqxx::transaction_base& tx, const std::string& me,
                                                double lease_seconds, int callback_max_attempts) {
  static const statement dead{"mg_cluster_dead",
                              "SELECT runtime_node FROM cluster_nodes WHERE runtime_node <> $1"
                              " AND last_seen_at < clock_timestamp() - make_interval(secs => $2)"
                              " ORDER BY last_seen_at LIMIT 1 FOR UPDATE SKIP LOCKED"};
  static const statement remove{"mg_cluster_remove_dead",
                                "DELETE FROM cluster_nodes WHERE runtime_node = $1"};
  auto r = exec(tx, dead, me, lease_seconds);
  if (r.empty())
    return std::nullopt;
  auto out = hand_over_claims(tx, str(r[0][0]), callback_max_attempts);
  exec(tx, remove, out.dead_node);
  return out;
}

} // namespace mg::db
