#include "persistence/claim_store.hpp"

#include "persistence/db.hpp"

namespace mg::db {

void add_submitting(pqxx::transaction_base& tx, write_batch& batch,
                    const std::vector<submitting_write>& writes) {
  // The expected state is an argument, not a constant: a constant 'READY'
  // lets the planner reach the rows through the READY partial index, whose
  // statistics lag a burst (see node_store's dispatch_claimable); keys only
  // always probe the primary key.
  static const statement q{
      "mg_write_submitting",
      "UPDATE movement_request_nodes n SET node_state = 'SUBMITTING', attempt_no = w.attempt_no,"
      " claim_token = gen_random_uuid(), idempotency_key = w.idempotency_key,"
      " started_at = clock_timestamp(), claimed_by = w.claimed_by,"
      " claimed_at = clock_timestamp(), ever_submitted = true,"
      " error_code = NULL, error_detail = NULL, next_observe_at = NULL,"
      " prepare_errors = 0, retry_at = NULL, updated_at = clock_timestamp()"
      " FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::text[])"
      "   AS w(id, attempt_no, idempotency_key, claimed_by, expected_state)"
      " WHERE n.id = w.id AND n.node_state = w.expected_state"
      " RETURNING n.id::text, n.claim_token::text"};
  std::vector<std::string> ids, attempts, keys, claimed_by, expected;
  for (auto& w : writes) {
    ids.push_back(w.node_id);
    attempts.push_back(std::to_string(w.attempt_no));
    keys.push_back(w.idempotency_key);
    claimed_by.push_back(w.claimed_by);
    expected.push_back(w.expected_state);
  }
  batch.add(tx, q, text_array(ids), text_array(attempts), text_array(keys), text_array(claimed_by),
            text_array(expected));
}

} // namespace mg::db
