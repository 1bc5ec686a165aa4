#include "actors/workers/executor_health.hpp"

#include <optional>
#include <vector>

#include "config/log.hpp"
#include "domain/evm_address.hpp"
#include "persistence/sidecar_store.hpp"

namespace mg::workers {

namespace {

struct observation {
  std::string key;
  db::health_state state = db::health_state::unknown;
  std::optional<std::string> address; // signers: a valid nonzero address
};

/// One provider's health() mapped to the stored state; never throws.
template <class Provider> observation check(const std::string& key, Provider& p, const char* kind) {
  observation o{key, db::health_state::unknown, std::nullopt};
  try {
    auto h = p.health();
    if (!h.implemented)
      return o;
    o.state = h.up ? db::health_state::up : db::health_state::down;
    o.address = domain::observed_evm_address(h.signer_address);
    if (!h.signer_address.empty() && !o.address)
      log::warn("health reported an invalid signer address; ignored",
                {{"kind", kind}, {"key", key}});
  } catch (const std::exception& e) {
    o.state = db::health_state::down;
    log::warn("health check failed", {{"kind", kind}, {"key", key}, {"error", e.what()}});
  } catch (...) {
    o.state = db::health_state::down;
    log::warn("health check failed", {{"kind", kind}, {"key", key}});
  }
  return o;
}

void count(health_counts* counts, db::health_state s) {
  if (!counts)
    return;
  ++(s == db::health_state::up     ? counts->up
     : s == db::health_state::down ? counts->down
                                   : counts->unknown);
}

} // namespace

pass_result executor_health_pass(db::connection_slot& conn,
                                 const domain::provider_registry& providers,
                                 const std::string& runtime_node, health_counts* counts) {
  std::vector<observation> executors, signers;
  // Siblings' remote providers too: their health() is a bounded call.
  for (auto& [key, e] : providers.every_executor())
    executors.push_back(check(key, *e, "executor"));
  for (auto& [key, s] : providers.every_signer())
    signers.push_back(check(key, *s, "signer"));

  pass_result out;
  std::vector<std::string> present;
  pqxx::work tx(conn.get());
  for (auto& o : executors) {
    db::record_executor_health(tx, o.key, runtime_node, o.state);
    count(counts, o.state);
  }
  for (auto& o : signers) {
    db::record_signer_health(tx, o.key, runtime_node, o.state, o.address);
    count(counts, o.state);
    present.push_back(o.key);
  }
  int orphaned = db::orphan_absent_signers(tx, runtime_node, present);
  tx.commit();
  if (counts)
    counts->orphaned += orphaned;
  if (orphaned)
    log::warn("signers no longer registered in this process marked orphan", {{"count", orphaned}});
  out.processed = static_cast<int>(executors.size() + signers.size());
  return out;
}

} // namespace mg::workers
