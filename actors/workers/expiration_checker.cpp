#include "actors/workers/expiration_checker.hpp"

#include "config/log.hpp"
#include "persistence/movement_store.hpp"

namespace mg::workers {

pass_result expiration_pass(db::connection_slot& conn, const config::settings& s) {
  pass_result out;
  pqxx::work tx(conn.get());
  auto ids = db::expire_pending_requests(tx, s.network_class, s.expiration_batch_size,
                                         s.callback_max_attempts);
  tx.commit();
  for (auto& id : ids)
    log::info("request expired awaiting approval", {{"request_id", id}});
  out.processed = static_cast<int>(ids.size());
  return out;
}

} // namespace mg::workers
