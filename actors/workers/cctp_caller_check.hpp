#pragma once
// The dispatcher's CCTP burn caller-alignment check (reference:
// validate_cctp_burn_caller_alignment() before preflight; the rule itself is
// domain/cctp_caller.hpp). Runs inside the claim transaction.
#include <optional>
#include <pqxx/pqxx>
#include <string>

#include "domain/executor.hpp"
#include "domain/plan.hpp"
#include "persistence/node_store.hpp"

namespace mg::workers {

/// For a `cctp_burn` node: why it must fail CCTP_CALLER_MISMATCH (nullopt:
/// aligned, or not a burn). Reads the enrolled identities and asks the
/// burn's signer who it is (health); throws when that call fails, which the
/// dispatcher treats as a preflight error.
std::optional<std::string> cctp_burn_caller_problem(pqxx::transaction_base& tx,
                                                    const db::claimed_node& n,
                                                    const domain::plan& plan,
                                                    const std::string& node_config_json,
                                                    const domain::provider_registry& providers);

} // namespace mg::workers
