#include "actors/workers/verify_drift.hpp"

#include <future>
#include <map>

#include "actors/workers/bounded_lanes.hpp"
#include "actors/workers/worker_table.hpp"
#include "config/log.hpp"
#include "domain/evm_tx.hpp"
#include "domain/json_writer.hpp"
#include "domain/keccak.hpp"
#include "executors/evm_rpc.hpp"

namespace mg::workers {

namespace {

/// One lane's answer: a value, or why there is none.
struct lane_answer {
  std::optional<std::string> value;
  std::string error;
};

/// What one chain's checks produced, to be recorded after the calls.
struct chain_result {
  std::optional<db::drift_observation> chain_id; // nullopt: eth_chainId undecided
  std::vector<db::baseline_check> checks;
};

std::string timeout_message(double seconds) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "timeout after %g s", seconds);
  return buf;
}

lane_answer answer_or_timeout(const std::optional<lane_answer>& a, double timeout) {
  return a ? *a : lane_answer{std::nullopt, timeout_message(timeout)};
}

/// A lane: one RPC call whose failures become an error string (never a
/// secret: executor errors name the origin and the failure only).
template <class F> std::function<lane_answer()> lane(F call, double timeout) {
  return [call, timeout]() -> lane_answer {
    auto started = std::chrono::steady_clock::now();
    try {
      return {call(), {}};
    } catch (const std::exception& ex) {
      return {std::nullopt, label_timeout(ex.what(), started, timeout)};
    }
  };
}

chain_result check_chain(std::uint64_t chain_id, const executors::evm_rpc& rpc,
                         const std::vector<db::registry_baseline>& baselines,
                         const config::settings& s) {
  chain_result out;
  const double timeout = s.verify_drift_timeout_seconds;
  const auto deadline = std::chrono::milliseconds(static_cast<long>(timeout * 1000));
  auto undecided_all = [&](const std::string& why) {
    for (auto& b : baselines)
      out.checks.push_back({b.id, std::nullopt, why});
  };

  std::vector<std::function<lane_answer()>> id_lane{
      lane([rpc] { return std::to_string(rpc.chain_id()); }, timeout)};
  auto reported = answer_or_timeout(run_bounded_lanes(id_lane, 1, deadline)[0], timeout);
  if (!reported.value) {
    log::warn("verify_drift: eth_chainId failed",
              {{"chain_id", static_cast<unsigned long>(chain_id)}, {"error", reported.error}});
    undecided_all("eth_chainId failed: " + reported.error);
    return out;
  }
  std::string expected = std::to_string(chain_id);
  bool matches = *reported.value == expected;
  out.chain_id = db::drift_observation{
      "evm_chain_id",
      expected,
      expected,
      *reported.value,
      matches,
      json::writer().begin_object().member("rpc_origin", rpc.origin()).end_object().str()};
  if (!matches) {
    // The endpoint serves another chain: its code says nothing about ours.
    undecided_all("chain id mismatch: the endpoint reports " + *reported.value);
    return out;
  }

  std::vector<std::function<lane_answer()>> lanes;
  for (auto& b : baselines) {
    auto address = domain::parse_0x_hex(b.address).value_or(std::string());
    lanes.push_back(
        lane([rpc, address] { return domain::to_0x_hex(domain::keccak256(rpc.code(address))); },
             timeout));
  }
  auto answers = run_bounded_lanes(std::move(lanes), s.verify_drift_concurrency, deadline);
  for (size_t i = 0; i < baselines.size(); ++i) {
    auto a = answer_or_timeout(answers[i], timeout);
    if (!a.value)
      log::warn("verify_drift: eth_getCode failed",
                {{"chain_id", static_cast<unsigned long>(chain_id)},
                 {"address", baselines[i].address},
                 {"error", a.error}});
    out.checks.push_back({baselines[i].id, a.value, a.error});
  }
  return out;
}

} // namespace

pass_result verify_drift_pass(db::connection_slot& conn, const config::settings& s,
                              verify_drift_report* report) {
  auto rpcs = executors::evm_rpc_clients(config::parse_rpc_urls(s.evm_rpc_urls),
                                         s.verify_drift_timeout_seconds);
  std::map<std::uint64_t, std::vector<db::registry_baseline>> by_chain;
  for (auto& b : db::load_baselines(conn.get()))
    by_chain[b.chain_id].push_back(b);

  // Chains side by side, each bounded by its own lanes and deadlines.
  std::vector<std::future<chain_result>> chains;
  for (auto& [id, rpc] : rpcs)
    chains.push_back(std::async(std::launch::async, check_chain, id, rpc, by_chain[id], s));
  std::vector<db::drift_observation> chain_ids;
  std::vector<db::baseline_check> checks;
  for (auto& f : chains) {
    auto r = f.get();
    if (r.chain_id)
      chain_ids.push_back(*r.chain_id);
    checks.insert(checks.end(), r.checks.begin(), r.checks.end());
  }
  for (auto& [id, baselines] : by_chain)
    if (!rpcs.count(id))
      for (auto& b : baselines)
        checks.push_back({b.id, std::nullopt, "no MG_EVM_RPC_URLS endpoint for this chain"});

  auto chain_counts = db::record_drift_observations(conn.get(), chain_ids);
  auto baseline_counts = db::record_baseline_checks(conn.get(), checks);
  if (chain_counts.detected + baseline_counts.detected > 0)
    log::warn("verify_drift: registry drift detected",
              {{"chains", chain_counts.detected}, {"baselines", baseline_counts.detected}});
  if (report) {
    report->chains_checked = static_cast<int>(chain_ids.size());
    for (auto& o : chain_ids)
      report->chains_drifted += o.matches ? 0 : 1;
    report->baselines = baseline_counts;
  }
  pass_result out;
  out.processed = chain_counts.checked + baseline_counts.checked;
  return out;
}

} // namespace mg::workers

namespace mg::actors {

std::optional<worker_pass> build_verify_drift(const worker_build& b) {
  if (b.ctx->settings.evm_rpc_urls.empty())
    return skipped("verify_drift", "MG_EVM_RPC_URLS (chain RPC endpoints)");
  return [ctx = b.ctx](db::connection_slot& c) {
    return workers::verify_drift_pass(c, ctx->settings);
  };
}

} // namespace mg::actors
