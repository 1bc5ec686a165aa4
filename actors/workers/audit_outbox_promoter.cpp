#include "actors/workers/audit_outbox_promoter.hpp"

#include "persistence/sidecar_store.hpp"

namespace mg::workers {

pass_result audit_promotion_pass(db::connection_slot& conn, int batch) {
  pass_result out;
  pqxx::work tx(conn.get());
  out.processed = db::promote_audit_outbox(tx, batch);
  tx.commit();
  return out;
}

} // namespace mg::workers
