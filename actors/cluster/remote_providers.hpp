#pragma once
// Executors and signers that sibling services offer as remote actors
// (SPEC §8, issue 6): the process-wide table the workers' provider_registry
// consults, its adapters, and the session's registration call.
//
// An adapter forwards each port call as one message of std::strings (the
// values as JSON, domain/provider_json.hpp) and waits at most
// MG_EXECUTOR_TIMEOUT_SECONDS; a timeout, a dead peer or an error answer
// throws domain::executor_error, so the dispatcher's existing paths apply
// (a submit becomes UNKNOWN and recovery asks later) and no worker hangs.
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>

#include "actors/protocol.hpp"
#include "domain/api.hpp"
#include "domain/executor.hpp"

namespace mg::actors {

enum class provider_kind { executor, signer };

/// The process's remote-provider table, told the local keys (which a
/// sibling may not take over) and the per-call timeout. Idempotent; call
/// once at start-up and put the result in provider_registry::remote.
std::shared_ptr<const domain::provider_source>
remote_providers(const domain::provider_registry& local, double timeout_seconds);

/// The session call (reg_exec / reg_signer): scope admin required (403).
/// Binds `key` to `provider` until the provider or `session` goes down
/// (its node disconnecting included). 400: bad key or no actor; 409: a
/// local provider has the key, or another live actor holds it. Answers
/// (status, JSON body) like every session call.
std::tuple<int32_t, std::string>
register_remote_provider(caf::actor_system& sys, const api::caller& who, provider_kind kind,
                         const std::string& key, const caf::actor& provider,
                         const caf::actor& session);

} // namespace mg::actors
