#include "actors/workers/template_proposal_expiration.hpp"

#include "config/log.hpp"
#include "persistence/sidecar_store.hpp"

namespace mg::workers {

pass_result proposal_expiration_pass(db::connection_slot& conn) {
  pass_result out;
  pqxx::work tx(conn.get());
  out.processed = db::expire_template_proposals(tx, proposal_expiration_batch);
  tx.commit();
  if (out.processed)
    log::info("template proposals expired", {{"count", out.processed}});
  return out;
}

} // namespace mg::workers
