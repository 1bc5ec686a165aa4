#include "actors/workers/evm_nonce_reaper.hpp"

#include "actors/workers/worker_table.hpp"
#include "config/log.hpp"
#include "domain/evm_tx.hpp"
#include "persistence/evm_nonce_store.hpp"

namespace mg::workers {

namespace {

constexpr int batch = 100;

} // namespace

pass_result evm_nonce_reaper_pass(db::connection_slot& conn,
                                  const std::map<std::uint64_t, executors::evm_rpc>& chains,
                                  double stale_seconds, nonce_reaper_counts* counts) {
  pass_result out;
  nonce_reaper_counts local;
  auto& n = counts ? *counts : local;
  n.reclaimed = db::reclaim_stale_reservations(conn.get(), stale_seconds, batch);
  if (n.reclaimed > 0)
    log::warn("stale evm nonce reservations reclaimed", {{"count", n.reclaimed}});
  // One chain call per sender: its mined count releases every nonce below.
  std::map<std::pair<std::uint64_t, std::string>, std::uint64_t> mined;
  for (const auto& r : db::open_broadcasts(conn.get(), batch)) {
    auto chain = chains.find(r.sender.chain_id);
    if (chain == chains.end())
      continue;
    auto key = std::make_pair(r.sender.chain_id, r.sender.address);
    if (!mined.count(key)) {
      try {
        auto address = domain::parse_0x_hex(r.sender.address).value_or("");
        mined[key] = chain->second.transaction_count(address, "latest").to_u64().value_or(0);
      } catch (const std::exception& ex) {
        log::warn("evm_nonce_reaper: chain did not answer",
                  {{"chain_id", std::to_string(r.sender.chain_id)}, {"error", ex.what()}});
        mined[key] = 0;
      }
    }
    if (r.nonce < mined[key]) {
      db::mark_consumed(conn.get(), r.sender, r.nonce);
      ++n.consumed;
    }
  }
  out.processed = n.reclaimed + n.consumed;
  return out;
}

} // namespace mg::workers

namespace mg::actors {

std::optional<worker_pass> build_evm_nonce_reaper(const worker_build& b) {
  const auto& s = b.ctx->settings;
  if (s.evm_rpc_urls.empty())
    return skipped("evm_nonce_reaper", "an EVM RPC client and endpoints (MG_EVM_RPC_URLS)");
  auto chains =
      std::make_shared<std::map<std::uint64_t, executors::evm_rpc>>(executors::evm_rpc_clients(
          config::parse_rpc_urls(s.evm_rpc_urls), s.evm_rpc_timeout_seconds));
  const double stale = s.evm_nonce_reservation_stale_seconds;
  return [chains, stale](db::connection_slot& c) {
    return workers::evm_nonce_reaper_pass(c, *chains, stale);
  };
}

} // namespace mg::actors
