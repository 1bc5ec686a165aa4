#include "persistence/claim_store.hpp"

#include "persistence/db.hpp"

namespace mg::db {

void mark_request_executing(pqxx::transaction_base& tx, const std::string& request_id) {
  static const statement q{"mg_mark_executing",
                           "UPDATE movement_requests SET request_state = 'EXECUTING',"
                           " updated_at = clock_timestamp() WHERE id = $1"};
  exec(tx, q, request_id);
}

void add_submitting(pqxx::transaction_base& tx, write_batch& batch, const submitting_write& w) {
  static const statement q{
      "mg_write_submitting",
      "UPDATE movement_request_nodes SET node_state = 'SUBMITTING', attempt_no = $2,"
      " claim_token = gen_random_uuid(), idempotency_key = $3, started_at = clock_timestamp(),"
      " claimed_by = $4, claimed_at = clock_timestamp(), ever_submitted = true,"
      " error_code = NULL, error_detail = NULL, next_observe_at = NULL,"
      " prepare_errors = 0, retry_at = NULL,"
      " updated_at = clock_timestamp() WHERE id = $1 AND node_state = 'READY'"
      " RETURNING claim_token::text"};
  batch.add(tx, q, w.node_id, w.attempt_no, w.idempotency_key, w.claimed_by);
}

} // namespace mg::db
