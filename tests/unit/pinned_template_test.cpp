// SPEC §3 "pinned by the template": compile refuses a `$ref` in an EVM
// node's chain_id, token or decimals; the shipped EVM templates pin chain
// 1337 (the local chain's), name their asset and a fee cap, and the ERC-20
// one pins the test token at the address the fixed-mnemonic deployer's
// first contract gets: keccak(rlp([deployer, 0]))[12:].
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <sstream>

#include "build_paths.hpp"
#include "domain/evm_tx.hpp"
#include "domain/json.hpp"
#include "domain/keccak.hpp"
#include "domain/plan.hpp"
#include "domain/rlp.hpp"

using namespace mg;
using namespace mg::domain;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string template_file(const std::string& name) {
  return read_file(std::string(MG_SOURCE_DIR) + "/templates/" + name + ".json");
}

std::string one_node(const std::string& executor, const std::string& action,
                     const std::string& config) {
  return R"({"template_key": "t", "version": 1, "nodes": [{"node_key": "send",
      "action_type": ")" +
         action + R"(", "executor_key": ")" + executor + R"(", "config": )" + config +
         "}], \"edges\": []}";
}

bool names(const compile_result& r, const std::string& field) {
  for (auto& e : r.errors)
    if (e.field == field && e.message.find("literal") != std::string::npos)
      return true;
  return false;
}

} // namespace

BOOST_AUTO_TEST_SUITE(pinned_template)

BOOST_AUTO_TEST_CASE(pinned_template_compile_refuses_refs_in_chain_token_and_decimals) {
  auto r = compile_plan(one_node("evm", "erc20_transfer",
                                 R"({"chain_id": "$ref:input.chain_id", "token": "$ref:input.token",
          "decimals": "$ref:input.decimals", "confirmations": "$ref:input.c"})"));
  BOOST_TEST(!r.compiled.has_value());
  BOOST_TEST(r.errors.size() == 3u); // confirmations may come from the request
  BOOST_TEST(names(r, "nodes[0].config.chain_id"));
  BOOST_TEST(names(r, "nodes[0].config.token"));
  BOOST_TEST(names(r, "nodes[0].config.decimals"));
  // Only decimals: still refused, naming it.
  r = compile_plan(
      one_node("evm", "erc20_transfer",
               R"({"chain_id": 1337, "token": "0xe78A0F7E598Cc8b0Bb87894B0F60dD2a88d6a8Ab",
                                "decimals": "$ref:input.decimals"})"));
  BOOST_TEST(r.errors.size() == 1u);
  BOOST_TEST(names(r, "nodes[0].config.decimals"));
  // An EVM action under another executor (a sibling's) is pinned too.
  r = compile_plan(one_node("remote_evm", "evm_transfer", R"({"chain_id": "$ref:input.chain"})"));
  BOOST_TEST(names(r, "nodes[0].config.chain_id"));
  // Literals compile; other executors' configs are not concerned.
  BOOST_TEST(
      compile_plan(one_node("evm", "evm_transfer", R"({"chain_id": 1337})")).compiled.has_value());
  BOOST_TEST(compile_plan(one_node("sim", "chain_transfer", R"({"chain_id": "$ref:input.chain"})"))
                 .compiled.has_value());
}

BOOST_AUTO_TEST_CASE(pinned_template_shipped_evm_templates_pin_chain_asset_and_fee_cap) {
  for (const char* name : {"evm_native_transfer", "evm_transfer_with_finality", "erc20_transfer"}) {
    auto r = compile_plan(template_file(name));
    BOOST_TEST_REQUIRE(r.compiled.has_value(), name);
    auto risk = json::parse(r.compiled->risk_controls_json);
    BOOST_TEST(json::get_string(*risk, "asset") ==
                   (std::string(name) == "erc20_transfer" ? "MINI" : "ETH"),
               name);
    BOOST_TEST(!json::get_string(*risk, "max_fee_wei").empty(), name);
    for (auto& n : r.compiled->nodes) {
      auto config = json::parse(n.config_json);
      BOOST_TEST((*config)["chain_id"].IsUint64(), name);
      BOOST_TEST((*config)["chain_id"].GetUint64() == 1337u, name);
    }
  }
}

BOOST_AUTO_TEST_CASE(pinned_template_erc20_token_is_the_deployers_first_contract) {
  // The deterministic ganache wallet's account 0 deploys the test token
  // first (nonce 0): CREATE puts it at keccak(rlp([sender, nonce]))[12:].
  auto deployer = *parse_evm_address("0x90F8bf6A479f320ead074411a4B0e7944Ea8c9C1");
  auto address =
      keccak256(rlp::encode_list({rlp::encode_bytes(deployer), rlp::encode_uint(uint256(0))}))
          .substr(12);
  auto r = compile_plan(template_file("erc20_transfer"));
  BOOST_TEST_REQUIRE(r.compiled.has_value());
  auto config = json::parse(r.compiled->nodes[0].config_json);
  BOOST_TEST(json::get_string(*config, "token") == *eip55_checksum(to_0x_hex(address)));
  BOOST_TEST((*config)["decimals"].GetInt() == 6); // tests/data/mini_token.sol
}

BOOST_AUTO_TEST_SUITE_END()
