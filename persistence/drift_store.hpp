#pragma once
// registry_baselines and registry_drift (migration 0007): loading the
// configured baselines, and recording what the drift workers observed.
// Each record call is one transaction that locks the subject's row, moves
// its drift state (domain::step_drift) and — on the edges only — enqueues
// registry_drift / registry_drift_resolved in notification_outbox, keyed on
// the drift episode: a drift seen every pass, or by two processes at
// once, is one notification.
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

namespace mg::db {

struct registry_baseline {
  long long id = 0;
  std::uint64_t chain_id = 0;
  std::string address;            // 0x + 40 lower-case hex
  std::string expected_code_hash; // 0x + 64 lower-case hex: Keccak-256 of eth_getCode
  std::string label;
};

/// Every baseline, by chain then id.
std::vector<registry_baseline> load_baselines(pqxx::connection& conn);

/// Inserts or replaces the expectation of (chain_id, address); a changed
/// expected hash resets the verification state (the old verdict was about
/// another expectation). Values must already be normalised (lower-case hex).
/// True when the row was new or changed.
bool upsert_baseline(pqxx::transaction_base& tx, const registry_baseline& b);

/// What one lane saw for one baseline.
struct baseline_check {
  long long id = 0;
  /// 0x hash of the code observed; nullopt when the check could not decide
  /// (RPC down, timeout, chain id mismatch): `error` says why.
  std::optional<std::string> observed_code_hash;
  std::string error;
};

struct drift_record_counts {
  int checked = 0;  // decided checks recorded
  int detected = 0; // subjects that entered drift (one notification each)
  int resolved = 0; // subjects that left drift (one notification each)
  int undecided = 0;
};

/// Records the checks in one transaction (rows locked in id order).
drift_record_counts record_baseline_checks(pqxx::connection& conn,
                                           std::vector<baseline_check> checks);

/// A drift subject other than a baseline: (source, subject) with the value
/// expected and the value seen.
struct drift_observation {
  std::string source;  // evm_chain_id | ccip
  std::string subject; // the chain id, the sidecar's item key
  std::string expected;
  std::string observed;
  bool matches = true;
  std::string detail_json = "{}"; // a JSON object, kept with the row and the notification
};

/// Records the observations in one transaction (rows locked in key order).
drift_record_counts record_drift_observations(pqxx::connection& conn,
                                              std::vector<drift_observation> observations);

} // namespace mg::db
