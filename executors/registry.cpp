#include "executors/registry.hpp"

#include "config/log.hpp"
#include "executors/evm_executor.hpp"
#include "executors/evm_local_signer.hpp"
#include "executors/local_signer.hpp"
#include "executors/sim.hpp"
#include "persistence/db.hpp"

namespace mg::executors {

domain::provider_registry configured_providers(const config::settings& s) {
  auto r = builtin_providers(s.database_url);
  if (!s.local_signer_key_file.empty())
    r.signers["local"] = std::make_shared<local_signer>(s.local_signer_key_file);
  std::shared_ptr<evm_local_signer> evm_signer;
  if (!s.evm_signer_key_file.empty()) {
    evm_signer = std::make_shared<evm_local_signer>(s.evm_signer_key_file);
    r.signers["evm_local"] = evm_signer;
  }
  if (!s.evm_rpc_urls.empty()) {
    if (!evm_signer) {
      log::warn("evm executor not registered: MG_EVM_SIGNER_KEY_FILE is not set");
    } else {
      auto pool = std::make_shared<db::connection_pool>(
          db::with_application_name(s.database_url, "movegate:evm"), 4);
      r.executors["evm"] = std::make_shared<evm_executor>(
          config::parse_rpc_urls(s.evm_rpc_urls), s.evm_rpc_timeout_seconds, pool, evm_signer);
    }
  }
  return r;
}

} // namespace mg::executors
