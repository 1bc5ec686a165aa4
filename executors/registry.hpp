#pragma once
// The providers a serving process registers, from its settings.
#include "config/settings.hpp"
#include "domain/executor.hpp"

namespace mg::executors {

/// builtin_providers (sim) plus the `local` signer when
/// MG_LOCAL_SIGNER_KEY_FILE is set (an unusable key file stops start-up).
domain::provider_registry configured_providers(const config::settings& s);

} // namespace mg::executors
