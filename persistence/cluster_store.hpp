#pragma once
// Cluster membership by a database lease (SPEC §8): each process owns a
// cluster_nodes row it renews; a row older than the lease is a dead process
// whose claimed work one survivor hands to recovery.
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "domain/process_identity.hpp"

namespace mg::db {

/// Registers `runtime_node` for `me` (started_at = last_seen_at = now);
/// false when a row of that name exists.
bool insert_cluster_node(pqxx::transaction_base& tx, const std::string& runtime_node,
                         const std::string& host, int cluster_port,
                         const domain::process_identity& me);

/// The row of a runtime name as a process starting under it sees it.
struct name_holder {
  bool lease_live = false;
  double renewed_seconds_ago = 0;
  double lease_remaining_seconds = 0;
  domain::process_identity identity; // incomplete for a row written without one
};

/// Locks the row of `runtime_node` (FOR UPDATE: waits for a survivor that
/// is taking it over); nullopt when it is gone.
std::optional<name_holder> lock_name_holder(pqxx::transaction_base& tx,
                                            const std::string& runtime_node, double lease_seconds);

/// The locked row of `runtime_node` now belongs to `me`, with a fresh lease.
void reregister_cluster_node(pqxx::transaction_base& tx, const std::string& runtime_node,
                             const std::string& host, int cluster_port,
                             const domain::process_identity& me);

/// Records the port the cluster front door actually bound (MG_CLUSTER_ADDR
/// with port 0 picks one) in this process's row.
void record_cluster_port(pqxx::connection& conn, const std::string& runtime_node, int port);

/// Renews this process's lease; false when its row is gone (a survivor
/// declared it dead and took its work: the caller must stop at once).
bool renew_lease(pqxx::transaction_base& tx, const std::string& runtime_node);

/// Removes this process's row on a clean shutdown (nothing is left claimed).
void leave_cluster(pqxx::connection& conn, const std::string& runtime_node);

/// A live peer (lease not expired) whose cluster door is open.
struct cluster_peer {
  std::string runtime_node;
  std::string host;
  int cluster_port = 0;
};

/// Every live process but `me` that recorded its cluster port.
std::vector<cluster_peer> live_peers(pqxx::transaction_base& tx, const std::string& me,
                                     double lease_seconds);

/// Seconds until `runtime_node`'s lease expires (≤ 0: expired); nullopt
/// when its row is gone (it left, or a survivor took it over).
std::optional<double> lease_remaining_seconds(pqxx::transaction_base& tx,
                                              const std::string& runtime_node,
                                              double lease_seconds);

struct takeover {
  std::string dead_node;
  int sent_to_recovery = 0;          // SUBMITTING nodes now UNKNOWN with a new token
  int refenced = 0;                  // SUBMITTED/OBSERVING nodes given a new token
  std::vector<std::string> requests; // requests whose nodes changed (reconcile them)
};

/// Takes at most one dead process (SKIP LOCKED: exactly one survivor gets
/// it): its SUBMITTING nodes become UNKNOWN (RUNTIME_NODE_LOST) with a new
/// claim token, the SUBMITTED/OBSERVING ones it claimed get a new token so
/// a late write of the dead process changes nothing; then its row is
/// deleted. nullopt when no dead process is left to take.
std::optional<takeover> take_over_one_dead_node(pqxx::transaction_base& tx, const std::string& me,
                                                double lease_seconds, int callback_max_attempts);

/// Hands every node claimed by `runtime_node` over (see above); the caller
/// holds that node's cluster_nodes row lock.
takeover hand_over_claims(pqxx::transaction_base& tx, const std::string& runtime_node,
                          int callback_max_attempts);

} // namespace mg::db
