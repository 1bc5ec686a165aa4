#pragma once
// The dispatcher's claim writes (SPEC §1 "write-ahead submit"): the
// SUBMITTING row committed before any executor.submit.
#include <pqxx/pqxx>
#include <string>
#include <vector>

namespace mg::db {

class write_batch;

/// The write-ahead row of one claimed attempt.
struct submitting_write {
  std::string node_id;
  int attempt_no = 0; // the new attempt
  std::string idempotency_key;
  std::string claimed_by; // runtime node
  // BLOCKED for a chain-claimed node whose READY row was never written
  // (claimed_node::activation_pending).
  std::string expected_state = "READY";
};

/// Queues on `batch`, as one statement, the updates of READY nodes (or
/// chain-claimed BLOCKED ones) to SUBMITTING with their new attempts, fresh
/// claim tokens and idempotency keys; when it is the batch's last
/// statement, the batch answers (id, token) as text for each node that was
/// in its expected state.
void add_submitting(pqxx::transaction_base& tx, write_batch& batch,
                    const std::vector<submitting_write>& writes);

} // namespace mg::db
