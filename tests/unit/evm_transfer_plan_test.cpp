// What an `evm` node asks for, read from its context: config fields and
// their refusals, and the exact transfer an intent describes (native value,
// or ERC-20 calldata to the token contract).
#include <boost/test/unit_test.hpp>

#include "domain/evm_transfer_plan.hpp"
#include "domain/evm_tx.hpp"

using namespace mg::domain;

namespace {

execution_context context(const std::string& action, const std::string& config,
                          const std::string& amount = "1.5",
                          const std::string& to = "0xFFcf8FDEE72ac11b5c542428B35EEF5769C409f0") {
  execution_context ctx;
  ctx.action_type = action;
  ctx.node_config = config;
  ctx.intent = R"({"amount": ")" + amount + R"(", "destination": ")" + to + "\"}";
  return ctx;
}

std::string refusal_of(const execution_context& ctx) {
  try {
    plan_evm_transfer(ctx, read_evm_config(ctx));
  } catch (const evm_refusal& r) {
    return r.code + " " + r.detail;
  }
  return "";
}

} // namespace

BOOST_AUTO_TEST_SUITE(evm_transfer_plan)

BOOST_AUTO_TEST_CASE(native_transfer_sends_the_exact_value_to_the_destination) {
  auto ctx = context("evm_transfer", R"({"chain_id": "1337", "confirmations": 3})");
  auto c = read_evm_config(ctx);
  BOOST_TEST(c.chain_id == 1337u);
  BOOST_TEST(c.confirmations == 3);
  BOOST_TEST(c.decimals == 18);
  auto plan = plan_evm_transfer(ctx, c);
  BOOST_TEST(to_0x_hex(plan.to) == "0xffcf8fdee72ac11b5c542428b35eef5769c409f0");
  BOOST_TEST(plan.value.to_decimal() == "1500000000000000000");
  BOOST_TEST(plan.data.empty());
}

BOOST_AUTO_TEST_CASE(erc20_transfer_calls_the_token_with_base_units) {
  auto ctx = context("erc20_transfer",
                     R"({"chain_id": 1, "decimals": 6,)"
                     R"( "token": "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"})",
                     "12.345678");
  auto plan = plan_evm_transfer(ctx, read_evm_config(ctx));
  BOOST_TEST(to_0x_hex(plan.to) == "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48");
  BOOST_TEST(plan.value.is_zero());
  BOOST_TEST(plan.amount.to_decimal() == "12345678");
  BOOST_TEST(plan.data == erc20_transfer_calldata(plan.data.substr(16, 20), uint256(12345678)));
}

BOOST_AUTO_TEST_CASE(what_cannot_be_executed_is_refused_with_its_code) {
  BOOST_TEST(refusal_of(context("evm_transfer", "{}")).rfind("CONFIG_INVALID", 0) == 0);
  BOOST_TEST(refusal_of(context("evm_transfer", R"({"chain_id": -1})")).rfind("CONFIG_INVALID", 0) ==
             0);
  BOOST_TEST(refusal_of(context("erc20_transfer", R"({"chain_id": 1, "token": "0x1"})"))
                 .rfind("CONFIG_INVALID", 0) == 0); // decimals missing
  BOOST_TEST(refusal_of(context("evm_transfer", R"({"chain_id": 1, "poll_seconds": 0})"))
                 .rfind("CONFIG_INVALID", 0) == 0);
  BOOST_TEST(refusal_of(context("evm_transfer", R"({"chain_id": 1})", "0"))
                 .rfind("INVALID_AMOUNT", 0) == 0);
  BOOST_TEST(refusal_of(context("evm_transfer", R"({"chain_id": 1})", "1.0000000000000000001"))
                 .rfind("INVALID_AMOUNT", 0) == 0);
  BOOST_TEST(refusal_of(context("evm_transfer", R"({"chain_id": 1})", "1",
                                "0xffcf8fdee72ac11b5c542428b35eef5769c409f0"))
                 .rfind("INVALID_DESTINATION", 0) == 0);
  BOOST_TEST(refusal_of(context("evm_transfer", R"({"chain_id": 1})")) == "");
}

BOOST_AUTO_TEST_CASE(finality_observation_needs_a_32_byte_hash) {
  auto ok = context("destination_chain_finality_observe",
                    R"({"chain_id": 1, "tx_hash": "0x)" + std::string(64, 'a') + "\"}");
  BOOST_TEST(read_evm_config(ok).tx_hash.size() == 32u);
  auto bad = context("destination_chain_finality_observe", R"({"chain_id": 1, "tx_hash": "0x12"})");
  BOOST_CHECK_THROW(read_evm_config(bad), evm_refusal);
}

BOOST_AUTO_TEST_SUITE_END()
