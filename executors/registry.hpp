#pragma once
// The providers a serving process registers, from its settings.
#include "config/settings.hpp"
#include "domain/executor.hpp"

namespace mg::executors {

/// builtin_providers (sim) plus the `local` signer when
/// MG_LOCAL_SIGNER_KEY_FILE is set, the `evm_local` signer when
/// MG_EVM_SIGNER_KEY_FILE is set (an unusable key file stops start-up), and
/// the `evm` executor, sending from `evm_local`'s account, when
/// MG_EVM_RPC_URLS is set too.
domain::provider_registry configured_providers(const config::settings& s);

} // namespace mg::executors
