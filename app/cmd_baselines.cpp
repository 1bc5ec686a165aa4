// `movegate baselines load FILE`: the registry baselines verify_drift checks.
//
//   {"baselines": [{"chain_id": 1, "address": "0xA0b8…eB48",
//                   "code_hash": "0x…64 hex…",      // Keccak-256 of eth_getCode
//                   "label": "USDC"}]}
//
// The whole file is checked before anything is written, then loaded in one
// transaction: a (chain_id, address) seen before gets the file's hash and
// label (a changed hash starts its verification afresh); loading the same
// file twice changes nothing.
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "app/common.hpp"
#include "domain/evm_tx.hpp"
#include "domain/json.hpp"
#include "persistence/db.hpp"
#include "persistence/drift_store.hpp"
#include "persistence/transaction.hpp"

namespace mg::app {

namespace {

/// The baselines of `text`, or throws std::invalid_argument naming the entry.
std::vector<db::registry_baseline> parse_baselines(const std::string& text) {
  std::string error;
  auto doc = json::parse(text, &error);
  if (!doc)
    throw std::invalid_argument("not JSON: " + error);
  if (!doc->IsObject() || !doc->HasMember("baselines") || !(*doc)["baselines"].IsArray())
    throw std::invalid_argument("expected {\"baselines\": [...]}");
  std::vector<db::registry_baseline> out;
  std::set<std::pair<std::uint64_t, std::string>> seen;
  const auto& list = (*doc)["baselines"];
  for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
    auto where = "baselines[" + std::to_string(i) + "]: ";
    const auto& v = list[i];
    if (!v.IsObject())
      throw std::invalid_argument(where + "not an object");
    db::registry_baseline b;
    if (!v.HasMember("chain_id") || !v["chain_id"].IsUint64() || v["chain_id"].GetUint64() == 0 ||
        v["chain_id"].GetUint64() > static_cast<std::uint64_t>(INT64_MAX))
      throw std::invalid_argument(where + "chain_id must be a positive integer");
    b.chain_id = v["chain_id"].GetUint64();
    auto address = domain::parse_evm_address(json::get_string(v, "address"));
    if (!address)
      throw std::invalid_argument(where +
                                  "address must be a 0x EVM address (EIP-55 if mixed case)");
    b.address = domain::to_0x_hex(*address);
    auto hash = domain::parse_0x_hex(json::get_string(v, "code_hash"));
    if (!hash || hash->size() != 32 || json::get_string(v, "code_hash").rfind("0x", 0) != 0)
      throw std::invalid_argument(where + "code_hash must be 0x + 64 hex digits");
    b.expected_code_hash = domain::to_0x_hex(*hash);
    b.label = json::get_string(v, "label");
    if (!seen.insert({b.chain_id, b.address}).second)
      throw std::invalid_argument(where + "duplicate chain_id and address");
    out.push_back(std::move(b));
  }
  return out;
}

int usage() {
  std::cerr << "usage: movegate baselines load FILE\n";
  return 2;
}

} // namespace

int cmd_baselines(const args& a) {
  if (a.size() != 2 || a[0] != "load")
    return usage();
  std::ifstream in(a[1], std::ios::binary);
  if (!in) {
    std::cerr << "movegate: cannot read " << a[1] << "\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::vector<db::registry_baseline> baselines;
  try {
    baselines = parse_baselines(text.str());
  } catch (const std::invalid_argument& e) {
    std::cerr << "movegate: " << a[1] << ": " << e.what() << "\n";
    return 1;
  }
  auto s = load_settings_or_exit();
  auto conn = db::connect(s.database_url);
  int changed = db::committed(*conn, [&](pqxx::transaction_base& tx) {
    int n = 0;
    for (auto& b : baselines)
      n += db::upsert_baseline(tx, b) ? 1 : 0;
    return n;
  });
  std::cout << baselines.size() << " baselines in " << a[1] << ", " << changed
            << " new or changed\n";
  return 0;
}

} // namespace mg::app
