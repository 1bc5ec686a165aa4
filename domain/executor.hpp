#pragma once
// Executor and signer ports, protocol_version "1.0" (reference: dispatch.py
// build_execution_context and SignRequest; SPEC §4).
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "domain/states.hpp"

namespace mg::domain {

inline constexpr const char* protocol_version = "1.0";

/// JSON-valued fields hold serialised JSON text.
struct execution_context {
  std::string protocol_version = domain::protocol_version;
  std::string request_id;
  std::string request_node_id;
  std::string compiled_plan_hash;
  std::string template_key;
  int template_version = 0;
  std::string node_key;
  std::string node_kind;
  std::string action_type;
  int attempt_no = 0; // the attempt this call belongs to
  std::string intent = "{}";
  std::string input_params = "{}";
  std::string resolved_bindings = "{}";
  std::string risk_controls = "{}";
  std::string prior_artifacts = "[]";  // artifacts of completed direct predecessors
  std::string node_config = "{}";      // config after top-level $ref resolution
  std::string provider_context = "{}"; // flat merge of completed direct predecessors' provider_refs
  std::string timeout_policy = "{}";
  /// `<node_id>:<attempt_no>`: the key the provider dedupes and fences on.
  std::string idempotency_key;
  /// provider_refs the node has so far (observe/recover).
  std::string provider_refs = "{}";
};

struct step_result {
  std::optional<node_state> next_state;
  std::string provider_state;
  std::string provider_refs = "{}";
  std::string provider_ref_id;
  std::string generated_artifacts = "[]";
  std::optional<double> retry_after_seconds;
  std::string error_code;
  std::string error_detail;
  /// When the engine's call to the executor returned; stamped by the
  /// engine, never taken from what the provider sent.
  std::optional<std::chrono::system_clock::time_point> answered_at;
};

struct prepared_action {
  std::string action_type;
  std::string payload_format = "json";
  std::string payload;
  std::string payload_hash;
};

struct signing_intent {
  std::string action;
  std::string asset;
  std::string amount;
  std::string destination;
  std::optional<std::string> max_fee_usd;
  std::string chain_family = "evm";
  std::string allowed_payload_hash;
};

struct sign_request {
  std::string protocol_version = domain::protocol_version;
  std::string request_id;
  std::string request_node_id;
  signing_intent intent;
  std::string payload_format;
  std::string payload;
  std::string payload_hash;
  std::string metadata = "{}";
};

struct sign_result {
  std::string signature;
  std::string signer_address;
};

/// What recover found for an attempt's idempotency key.
enum class recover_outcome {
  found,  // the provider has the attempt: `result` is its state
  fenced, // no record; the key is now refused forever → node READY
  still_unknown,
};

struct recover_result {
  recover_outcome outcome = recover_outcome::still_unknown;
  step_result result;
};

struct health_result {
  bool implemented = true;
  bool up = true;
  std::string detail;
  std::string signer_address;
};

/// Raised by an executor when a call could not be made or answered (network,
/// provider outage). The engine decides what that means for the node.
struct executor_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Raised when a provider's answer is malformed, oversized or otherwise not
/// one the protocol allows (SPEC §4): unlike a failed call, asking again
/// will not help, and the engine settles the node PROVIDER_PROTOCOL_ERROR.
struct provider_protocol_error : executor_error {
  using executor_error::executor_error;
};

/// Submit refused because recovery fenced the key.
inline constexpr const char* fenced_error_code = "FENCED";

/// One submit of a batch (SPEC §1 batched steps).
struct submit_call {
  const execution_context* ctx = nullptr;
  const prepared_action* action = nullptr;
  const sign_result* signature = nullptr; // null: unsigned
};

class executor {
public:
  virtual ~executor() = default;
  /// nullopt: go on; a result: transition to its next_state and stop.
  virtual std::optional<step_result> preflight(const execution_context& ctx) = 0;
  /// nullopt: nothing to submit → node FAILED.
  virtual std::optional<prepared_action> prepare(const execution_context& ctx) = 0;
  virtual step_result submit(const execution_context& ctx, const prepared_action& action,
                             const sign_result* signature) = 0;
  virtual step_result observe(const execution_context& ctx) = 0;
  virtual recover_result recover(const execution_context& ctx) = 0;
  virtual health_result health() = 0;
  /// The claim that prepared `action` ended before SUBMITTING (a signer
  /// refused, none was bound, …): nothing was or will be submitted for it,
  /// so what prepare reserved (an EVM nonce) may be released at once
  /// instead of waiting for a reaper. Best effort: errors are logged.
  virtual void abandon(const execution_context& ctx, const prepared_action& action) {
    (void)ctx;
    (void)action;
  }
  /// The calls' submits, answered in their order, each as submit answers.
  /// An executor may answer them with one provider round trip (the sim:
  /// one ledger write); an exception leaves every call of the batch
  /// unanswered. By default, submit one after the other.
  virtual std::vector<step_result> submit_many(const std::vector<submit_call>& calls) {
    std::vector<step_result> out;
    out.reserve(calls.size());
    for (auto& c : calls)
      out.push_back(submit(*c.ctx, *c.action, c.signature));
    return out;
  }
  /// SPEC §1 batched claims: true only when preflight and prepare of this
  /// node do no I/O and never wait, so a claim transaction may hold other
  /// requests' locks while they run. Off unless an executor promises it.
  virtual bool claims_in_batch(const execution_context& ctx) const {
    (void)ctx;
    return false;
  }
};

class signer {
public:
  virtual ~signer() = default;
  /// Must refuse (throw executor_error) when payload_hash differs from
  /// intent.allowed_payload_hash.
  virtual sign_result sign(const sign_request& req) = 0;
  virtual health_result health() = 0;
  /// True only when sign does no I/O and never waits (see
  /// executor::claims_in_batch).
  virtual bool signs_in_process() const { return false; }
};

/// Providers that come and go while the process runs (a sibling's remote
/// actor, SPEC §8). Thread-safe. A pointer it returns stays valid for the
/// life of the source even after the provider leaves: its calls then throw
/// executor_error, so a worker holding it never touches freed memory.
class provider_source {
public:
  virtual ~provider_source() = default;
  virtual executor* find_executor(const std::string& key) const = 0;
  virtual signer* find_signer(const std::string& key) const = 0;
  /// Those registered right now, by key (for health checks).
  virtual std::vector<std::pair<std::string, executor*>> current_executors() const = 0;
  virtual std::vector<std::pair<std::string, signer*>> current_signers() const = 0;
};

/// Executors and signers by key; shared by the workers of one process. The
/// maps are filled at start-up and only read afterwards; `remote` (may be
/// null) is consulted for keys no local provider has, so a sibling can
/// never shadow a built-in one.
struct provider_registry {
  std::map<std::string, std::shared_ptr<executor>> executors;
  std::map<std::string, std::shared_ptr<signer>> signers;
  std::shared_ptr<const provider_source> remote;

  executor* find_executor(const std::string& key) const {
    auto it = executors.find(key);
    if (it != executors.end())
      return it->second.get();
    return remote ? remote->find_executor(key) : nullptr;
  }
  signer* find_signer(const std::string& key) const {
    auto it = signers.find(key);
    if (it != signers.end())
      return it->second.get();
    return remote ? remote->find_signer(key) : nullptr;
  }

  /// Every executor reachable now by key, local ones first.
  std::vector<std::pair<std::string, executor*>> every_executor() const {
    return every(executors, remote ? remote->current_executors()
                                   : std::vector<std::pair<std::string, executor*>>{});
  }
  /// Every signer reachable now by key, local ones first.
  std::vector<std::pair<std::string, signer*>> every_signer() const {
    return every(signers, remote ? remote->current_signers()
                                 : std::vector<std::pair<std::string, signer*>>{});
  }

private:
  template <class T>
  static std::vector<std::pair<std::string, T*>>
  every(const std::map<std::string, std::shared_ptr<T>>& local,
        std::vector<std::pair<std::string, T*>> remote_ones) {
    std::vector<std::pair<std::string, T*>> out;
    for (auto& [key, p] : local)
      out.emplace_back(key, p.get());
    out.insert(out.end(), remote_ones.begin(), remote_ones.end());
    return out;
  }
};

} // namespace mg::domain
