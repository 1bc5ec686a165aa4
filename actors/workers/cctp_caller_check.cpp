#include "actors/workers/cctp_caller_check.hpp"

#include "domain/cctp_caller.hpp"
#include "persistence/catalog_store.hpp"

namespace mg::workers {

std::optional<std::string> cctp_burn_caller_problem(pqxx::transaction_base& tx,
                                                    const db::claimed_node& n,
                                                    const domain::plan& plan,
                                                    const std::string& node_config_json,
                                                    const domain::provider_registry& providers) {
  if (n.action_type != domain::cctp_burn_action)
    return std::nullopt;
  domain::cctp_burn_facts f;
  f.node_config_json = node_config_json;
  f.burn.signer_key = n.signer_key;
  if (!n.signer_key.empty()) {
    f.burn.expected = db::expected_identity(tx, n.signer_key);
    if (auto* signer = providers.find_signer(n.signer_key))
      f.burn.reported = signer->health().signer_address;
  }
  for (auto& pn : plan.nodes)
    if (pn.action_type == domain::cctp_mint_action) {
      f.plan_has_mint = true;
      f.mint.signer_key = pn.signer_key;
      if (!pn.signer_key.empty())
        f.mint.expected = db::expected_identity(tx, pn.signer_key);
      break;
    }
  auto why = domain::cctp_burn_caller_problem(f);
  if (why.empty())
    return std::nullopt;
  return why;
}

} // namespace mg::workers
