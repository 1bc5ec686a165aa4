#include "executors/registry.hpp"

#include "executors/evm_local_signer.hpp"
#include "executors/local_signer.hpp"
#include "executors/sim.hpp"

namespace mg::executors {

domain::provider_registry configured_providers(const config::settings& s) {
  auto r = builtin_providers(s.database_url);
  if (!s.local_signer_key_file.empty())
    r.signers["local"] = std::make_shared<local_signer>(s.local_signer_key_file);
  if (!s.evm_signer_key_file.empty())
    r.signers["evm_local"] = std::make_shared<evm_local_signer>(s.evm_signer_key_file);
  return r;
}

} // namespace mg::executors
