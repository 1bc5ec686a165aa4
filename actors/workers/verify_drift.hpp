#pragma once
// verify_drift (reference §13): every MG_VERIFY_DRIFT_INTERVAL_SECONDS, per
// chain of MG_EVM_RPC_URLS (chains checked side by side), the endpoint's
// eth_chainId is compared with the configured id, then each
// registry_baselines row of that chain has its eth_getCode hashed
// (Keccak-256) and compared with expected_code_hash — at most
// MG_VERIFY_DRIFT_CONCURRENCY calls at a time per chain, each lane cut off
// after MG_VERIFY_DRIFT_TIMEOUT_SECONDS. No transaction is open while a
// chain answers; the verdicts are recorded afterwards (drift_store), and
// drift is notified once per episode, recovery too.
//
// A check that cannot decide (RPC down, timeout, malformed reply, the
// endpoint serving another chain, no endpoint for the baseline's chain) is
// not drift: it is logged and kept in last_error, and the drift state is
// left as it was.
#include <string>

#include "actors/workers/engine.hpp"
#include "config/settings.hpp"
#include "persistence/connection_slot.hpp"
#include "persistence/drift_store.hpp"

namespace mg::workers {

struct verify_drift_report {
  int chains_checked = 0; // eth_chainId answered
  int chains_drifted = 0; // ... with another id
  db::drift_record_counts baselines;
};

/// One pass over every chain and baseline; processed = decided checks.
pass_result verify_drift_pass(db::connection_slot& conn, const config::settings& s,
                              verify_drift_report* report = nullptr);

} // namespace mg::workers
