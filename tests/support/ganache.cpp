#include "tests/support/ganache.hpp"
#include "build_paths.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "domain/evm_tx.hpp"
#include "domain/json.hpp"
#include "tests/support/serve_fixture.hpp"

namespace mg::test {

namespace {

const ganache_account wallet[] = {
    {"0x90F8bf6A479f320ead074411a4B0e7944Ea8c9C1",
     "0x4f3edf983ac636a65a842ce7c78d9aa706d3b113bce9c46f30d7d21715b23b1d"},
    {"0xFFcf8FDEE72ac11b5c542428B35EEF5769C409f0",
     "0x6cbed15c793ce57650b9877cf6fa156fbef513c4e6134f022a85b1ffdd59b2a1"},
    {"0x22d491Bde2303f2f43325b2108D26f1eAbA1e32b",
     "0x6370fd033278c143179d81c5526140625662b8daa446c22ee2d73db3707e620c"},
    {"0xE11BA2b4D45Eaed5996Cd0823791E0C93114882d",
     "0x646f1ce2fdad0e6deeeb5c7e8e5543bdde65e86029e2fd9fc169899c440a7913"},
    {"0xd03ea8624C8C5987235048901fB614fDcA89b117",
     "0xadd53f9a7e588d003326d1cbf9e4a43c061aadd9bc938c843a79e7b4fd2ad743"},
    {"0x95cED938F7991cd0dFcb48F0a06a40FA1aF46EBC",
     "0x395df67f0c2d2d9fe1ad08d1bc8b6627011959b79c53d7dd6a3536a33ab8a4fd"},
    {"0x3E5e9111Ae8eB78Fe1CC3bb8915d5D461F3Ef9A9",
     "0xe485d098507f54e7733a205420dfddbe58db035fa577fc294ebd14db90767a52"},
    {"0x28a8746e75304c0780E011BEd21C72cD78cd535E",
     "0xa453611d9419d0e56f499079478fd72c37b251a94bfde4d19872c44cf65386e3"},
    {"0xACa94ef8bD5ffEE41947b4585a84BdA5a3d3DA6E",
     "0x829e924fdf021ba3dbbc4225edfece9aca04b929d6e75613329ca6f1d31c0bb4"},
    {"0x1dF62f291b2E969fB0849d99D9Ce41e2F137006e",
     "0xb0057716d5917badaf911b193b12b910811c1497b5bada8d7711f758981c3773"},
};

std::string ganache_binary() {
  return std::string(MG_SOURCE_DIR) + "/tests/js/node_modules/.bin/ganache";
}

} // namespace

const ganache_account& ganache_wallet(int index) {
  return wallet[index];
}

bool ganache_installed() {
  return ::access(ganache_binary().c_str(), X_OK) == 0;
}

ganache_chain::ganache_chain(const std::vector<std::string>& miner_args) {
  if (!ganache_installed())
    throw std::runtime_error("ganache is not installed: run scripts/install-deps.sh");
  const int port = free_port();
  url = "http://127.0.0.1:" + std::to_string(port);
  log_path_ = std::string(MG_BINARY_DIR) + "/ganache-" + std::to_string(::getpid()) + "-" +
              std::to_string(port) + ".log";
  std::vector<std::string> args = {
      ganache_binary(),     "--server.host",          "127.0.0.1",       "--server.port",
      std::to_string(port), "--wallet.deterministic", "--chain.chainId", "1337",
      "--logging.quiet"};
  args.insert(args.end(), miner_args.begin(), miner_args.end());
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    std::FILE* log = std::fopen(log_path_.c_str(), "w");
    if (log) {
      ::dup2(fileno(log), 1);
      ::dup2(fileno(log), 2);
    }
    ::setpgid(0, 0);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  // A cold start (first run after npm install, a busy machine) takes far
  // longer than a warm one; the loop returns as soon as ganache answers.
  constexpr int start_limit_seconds = 120;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(start_limit_seconds);
  for (;;) {
    try {
      if (rpc().chain_id() == ganache_chain_id)
        return;
    } catch (const std::exception&) {
    }
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("ganache exited at start; see " + log_path_);
    }
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("ganache did not answer within " +
                               std::to_string(start_limit_seconds) + " s; see " + log_path_);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

ganache_chain::~ganache_chain() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  if (!key_path_.empty())
    std::remove(key_path_.c_str());
}

std::string ganache_chain::rpc_urls_setting() const {
  return std::to_string(ganache_chain_id) + "=" + url;
}

std::string ganache_chain::key_file(int index) {
  if (key_path_.empty())
    key_path_ = log_path_ + ".key";
  std::ofstream(key_path_) << wallet[index].key << "\n";
  return key_path_;
}

std::string ganache_chain::deploy(const std::string& init_code_hex, int from_index) {
  auto client = rpc();
  std::string tx = "{\"from\":" + json::quote(wallet[from_index].address) +
                   ",\"data\":" + json::quote(init_code_hex) + ",\"gas\":\"0x4c4b40\"}";
  auto hash_json = client.call("eth_sendTransaction", "[" + tx + "]");
  // Mined at the next block (up to a second with --miner.blockTime 1), later
  // on a busy machine: wait for the receipt, not for a fixed count.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    auto receipt = json::parse(client.call("eth_getTransactionReceipt", "[" + hash_json + "]"));
    if (receipt && receipt->IsObject()) {
      auto address = domain::parse_0x_hex(json::get_string(*receipt, "contractAddress"));
      if (!address || address->size() != 20 || json::get_string(*receipt, "status") != "0x1")
        throw std::runtime_error("contract deployment failed");
      return *address;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw std::runtime_error("contract deployment was not mined");
}

} // namespace mg::test
