#pragma once
// A throwaway local EVM chain for tests: npm `ganache` (tests/js) on a free
// loopback port with the deterministic wallet, chain id 1337. Started per
// fixture and killed with it; every test gets a fresh chain.
#include <string>
#include <sys/types.h>
#include <vector>

#include "executors/evm_rpc.hpp"

namespace mg::test {

/// The deterministic wallet's accounts 0..9 (1000 ETH each at start).
struct ganache_account {
  const char* address; // EIP-55
  const char* key;     // 0x + 64 hex
};
const ganache_account& ganache_wallet(int index);

inline constexpr std::uint64_t ganache_chain_id = 1337;

struct ganache_chain {
  /// `miner_args`: extra ganache options. Default (eager instamine):
  /// eth_sendRawTransaction returns once its block is mined. Real-chain-like:
  /// {"--miner.instamine", "strict"} (receipt on a later poll) or
  /// {"--miner.blockTime", "1"} (a block a second, so confirmations grow).
  explicit ganache_chain(const std::vector<std::string>& miner_args = {});
  ~ganache_chain();
  ganache_chain(const ganache_chain&) = delete;

  std::string url;                      // http://127.0.0.1:PORT
  std::string rpc_urls_setting() const; // "1337=<url>" for MG_EVM_RPC_URLS
  executors::evm_rpc rpc() const { return executors::evm_rpc(url, 10); }

  /// Writes account `index`'s key to a temp file (for MG_EVM_SIGNER_KEY_FILE);
  /// removed with the fixture.
  std::string key_file(int index);

  /// Deploys `init_code_hex` from account `from_index` (ganache signs for
  /// its own unlocked accounts) and returns the contract's address (20 bytes).
  std::string deploy(const std::string& init_code_hex, int from_index = 0);

private:
  pid_t pid_ = -1;
  std::string log_path_;
  std::string key_path_;
};

/// True when tests/js/node_modules has ganache (install-deps js_deps).
bool ganache_installed();

} // namespace mg::test
