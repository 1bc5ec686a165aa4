// The engine's signing policy (SPEC §4) field by field: a payload an
// executor prepared is signable only when it is exactly the transfer the
// node's config and intent describe, with a capped fee, an empty access
// list and the attempt's reserved nonce; the decoder of EIP-155 and
// EIP-1559 signing data it relies on; and the SignRequest it builds, field
// by field against the reference's construction.
#include <boost/test/unit_test.hpp>

#include "domain/evm_tx.hpp"
#include "domain/evm_tx_decode.hpp"
#include "domain/hash.hpp"
#include "domain/keccak.hpp"
#include "domain/rlp.hpp"
#include "domain/signing_policy.hpp"

using namespace mg::domain;

namespace {

const char* alice = "0xFFcf8FDEE72ac11b5c542428B35EEF5769C409f0";
const char* mallory = "0x22d491Bde2303f2f43325b2108D26f1eAbA1e32b";
const char* token = "0xe78A0F7E598Cc8b0Bb87894B0F60dD2a88d6a8Ab";
const char* other_token = "0xCfEB869F69431e42cdB54A4F4f105C19C080A601";

std::string bytes(const std::string& hex) {
  return parse_0x_hex(hex).value();
}
uint256 dec(const char* d) {
  return uint256::from_decimal(d).value();
}

execution_context native_ctx() {
  execution_context c;
  c.request_id = "req-1";
  c.request_node_id = "node-1";
  c.action_type = "evm_transfer";
  c.idempotency_key = "node-1:1";
  c.node_config = R"({"chain_id": 1337, "confirmations": 1})";
  c.risk_controls = R"({"max_amount": "10", "max_fee_wei": "10000000000000000"})";
  c.intent = std::string(R"({"asset": "ETH", "amount": "1.5", "destination": ")") + alice + "\"}";
  return c;
}

execution_context token_ctx() {
  auto c = native_ctx();
  c.action_type = "erc20_transfer";
  c.node_config =
      std::string(
          R"({"chain_id": 1337, "decimals": 6, "max_fee_wei": 300000000000000, "token": ")") +
      token + "\"}";
  c.intent =
      std::string(R"({"asset": "MINI", "amount": "12.345678", "destination": ")") + alice + "\"}";
  return c;
}

/// The honest native transaction: 1.5 ETH to alice at nonce 7, 21000 gas at
/// at most 2 gwei.
decoded_evm_tx native_tx() {
  decoded_evm_tx tx;
  tx.kind = evm_tx_kind::eip1559;
  tx.chain_id = 1337;
  tx.nonce = 7;
  tx.max_priority_fee_per_gas = dec("1000000000");
  tx.max_fee_per_gas = dec("2000000000");
  tx.gas_limit = 21000;
  tx.to = *parse_evm_address(alice);
  tx.value = dec("1500000000000000000");
  return tx;
}

decoded_evm_tx token_tx() {
  auto tx = native_tx();
  tx.gas_limit = 65000;
  tx.to = *parse_evm_address(token);
  tx.value = 0;
  tx.data = erc20_transfer_calldata(*parse_evm_address(alice), uint256(12345678));
  return tx;
}

prepared_action action_for(const decoded_evm_tx& tx) {
  prepared_action a;
  a.action_type = "evm_transfer";
  a.payload_format = "evm_signing_data";
  auto data = encode_evm_signing_data(tx);
  a.payload = to_0x_hex(data);
  a.payload_hash = to_0x_hex(keccak256(data));
  return a;
}

const std::optional<nonce_reservation> reserved_7 = nonce_reservation{1337, 7};

/// "" when allowed, else the refusal's detail.
std::string refusal(const execution_context& ctx, const decoded_evm_tx& tx,
                    const std::optional<nonce_reservation>& r = reserved_7) {
  auto v = check_signing_policy(ctx, action_for(tx), r);
  return v.allowed ? "" : (v.detail.empty() ? "refused without a reason" : v.detail);
}

bool starts(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

} // namespace

BOOST_AUTO_TEST_SUITE(signing_policy)

BOOST_AUTO_TEST_CASE(signing_policy_honest_native_and_token_transfers_pass_with_the_engine_hash) {
  auto a = action_for(native_tx());
  auto v = check_signing_policy(native_ctx(), a, reserved_7);
  BOOST_TEST(v.allowed, v.detail);
  BOOST_TEST(v.allowed_payload_hash == a.payload_hash);
  BOOST_TEST(refusal(token_ctx(), token_tx()) == "");
  // A legacy EIP-155 transaction with the same fields passes too.
  auto legacy = native_tx();
  legacy.kind = evm_tx_kind::legacy_eip155;
  legacy.max_priority_fee_per_gas = legacy.max_fee_per_gas;
  BOOST_TEST(refusal(native_ctx(), legacy) == "");
}

BOOST_AUTO_TEST_CASE(signing_policy_refuses_another_chain_recipient_or_value) {
  auto tx = native_tx();
  tx.chain_id = 1;
  BOOST_TEST(starts(refusal(native_ctx(), tx), "chain_id"));
  tx = native_tx();
  tx.to = *parse_evm_address(mallory);
  BOOST_TEST(starts(refusal(native_ctx(), tx), "recipient"));
  tx = native_tx();
  tx.to.clear(); // contract creation
  BOOST_TEST(starts(refusal(native_ctx(), tx), "recipient"));
  tx = native_tx();
  tx.value = dec("1500000000000000001");
  BOOST_TEST(starts(refusal(native_ctx(), tx), "value"));
  tx.value = dec("1400000000000000000"); // less is not the intent either
  BOOST_TEST(starts(refusal(native_ctx(), tx), "value"));
}

BOOST_AUTO_TEST_CASE(signing_policy_native_transfer_needs_empty_calldata_and_access_list) {
  auto tx = native_tx();
  tx.data = "\x01";
  BOOST_TEST(starts(refusal(native_ctx(), tx), "calldata"));
  tx = native_tx();
  // [[address, []]]: one access-list entry.
  tx.access_list =
      rlp::encode_list({rlp::encode_bytes(std::string(20, '\x11')), rlp::encode_list({})});
  BOOST_TEST(starts(refusal(native_ctx(), tx), "access_list"));
}

BOOST_AUTO_TEST_CASE(signing_policy_refuses_another_token_or_transfer_call) {
  auto tx = token_tx();
  tx.to = *parse_evm_address(other_token);
  BOOST_TEST(starts(refusal(token_ctx(), tx), "token"));
  tx = token_tx();
  tx.data = erc20_transfer_calldata(*parse_evm_address(mallory), uint256(12345678));
  BOOST_TEST(starts(refusal(token_ctx(), tx), "calldata"));
  // The amount is in base units of the template's 6 decimals: the same
  // figure at 18 decimals is refused.
  tx.data = erc20_transfer_calldata(*parse_evm_address(alice), dec("12345678000000000000"));
  BOOST_TEST(starts(refusal(token_ctx(), tx), "calldata"));
  tx = token_tx();
  tx.value = 1;
  BOOST_TEST(starts(refusal(token_ctx(), tx), "value"));
  // approve(alice, amount) instead of transfer.
  tx = token_tx();
  tx.data[0] = '\x09';
  tx.data[1] = '\x5e';
  tx.data[2] = '\xa7';
  tx.data[3] = '\xb3';
  BOOST_TEST(starts(refusal(token_ctx(), tx), "calldata"));
}

BOOST_AUTO_TEST_CASE(signing_policy_caps_the_fee_from_config_or_risk_controls) {
  // risk_controls cap 0.01 ETH: 21000 gas x 476190476190 wei > 1e16.
  auto tx = native_tx();
  tx.max_fee_per_gas = dec("476190476191");
  BOOST_TEST(starts(refusal(native_ctx(), tx), "fee"));
  tx.max_fee_per_gas = dec("476190476190"); // 9999999999999990 wei: under the cap
  BOOST_TEST(refusal(native_ctx(), tx) == "");
  // config.max_fee_wei wins over risk_controls.
  auto ctx = native_ctx();
  ctx.node_config = R"({"chain_id": 1337, "max_fee_wei": "42000000000000"})";
  BOOST_TEST(refusal(ctx, native_tx()) == ""); // 21000 x 2 gwei = 42e12
  tx = native_tx();
  tx.gas_limit = 21001;
  BOOST_TEST(starts(refusal(ctx, tx), "fee"));
  // A gas limit that overflows the product.
  tx.gas_limit = uint256::max();
  BOOST_TEST(starts(refusal(ctx, tx), "fee"));
  // No cap at all is refused, and so is a cap that is not a wei amount.
  ctx.risk_controls = "{}";
  ctx.node_config = R"({"chain_id": 1337})";
  BOOST_TEST(starts(refusal(ctx, native_tx()), "fee"));
  ctx.node_config = R"({"chain_id": 1337, "max_fee_wei": "1e18"})";
  BOOST_TEST(starts(refusal(ctx, native_tx()), "fee"));
}

BOOST_AUTO_TEST_CASE(signing_policy_requires_the_attempts_reserved_nonce) {
  auto tx = native_tx();
  tx.nonce = 8;
  BOOST_TEST(starts(refusal(native_ctx(), tx), "nonce"));
  BOOST_TEST(starts(refusal(native_ctx(), native_tx(), std::nullopt), "nonce"));
  BOOST_TEST(starts(refusal(native_ctx(), native_tx(), nonce_reservation{1, 7}), "nonce"));
}

BOOST_AUTO_TEST_CASE(signing_policy_refuses_bare_hashes_unknown_bytes_and_lying_hashes) {
  auto ctx = native_ctx();
  auto a = action_for(native_tx());
  auto hash_only = a;
  hash_only.payload_format = "evm_signing_hash";
  hash_only.payload = a.payload_hash;
  BOOST_TEST(!check_signing_policy(ctx, hash_only, reserved_7).allowed);
  auto as_json = a;
  as_json.payload_format = "json";
  BOOST_TEST(starts(check_signing_policy(ctx, as_json, reserved_7).detail, "payload_format"));
  auto garbage = a;
  garbage.payload = a.payload + "00"; // a trailing byte
  BOOST_TEST(starts(check_signing_policy(ctx, garbage, reserved_7).detail, "payload"));
  auto lying = a;
  lying.payload_hash = "0x" + keccak256_hex("another transaction");
  BOOST_TEST(starts(check_signing_policy(ctx, lying, reserved_7).detail, "payload_hash"));
  // Bad intent or config: refused, not thrown.
  auto bad = ctx;
  bad.intent = R"({"amount": "1.5", "destination": "0xffcf8fdee72ac11b5c542428b35eef5769c409f0"})";
  BOOST_TEST(!check_signing_policy(bad, a, reserved_7).allowed);
  bad = ctx;
  bad.node_config = "{}";
  BOOST_TEST(!check_signing_policy(bad, a, reserved_7).allowed);
}

BOOST_AUTO_TEST_CASE(signing_policy_other_formats_pass_only_when_the_payload_hashes_to_its_hash) {
  execution_context ctx;
  ctx.action_type = "cctp_burn";
  prepared_action a;
  a.action_type = "cctp_burn";
  a.payload = R"({"burn": 1})";
  a.payload_hash = sha256_hex(a.payload);
  auto v = check_signing_policy(ctx, a, std::nullopt);
  BOOST_TEST(v.allowed);
  BOOST_TEST(v.allowed_payload_hash == a.payload_hash);
  a.payload_hash = "0x" + sha256_hex(a.payload); // either spelling
  BOOST_TEST(check_signing_policy(ctx, a, std::nullopt).allowed);
  a.payload_hash = sha256_hex("something else");
  BOOST_TEST(!check_signing_policy(ctx, a, std::nullopt).allowed);
  // EVM signing data only for the EVM transfers the engine checks.
  auto evm = action_for(native_tx());
  BOOST_TEST(!check_signing_policy(ctx, evm, reserved_7).allowed);
}

BOOST_AUTO_TEST_CASE(signing_policy_sign_request_is_the_references_construction) {
  auto ctx = native_ctx();
  ctx.input_params = R"({"chain_family": "evm", "venue": "x"})";
  prepared_action a;
  a.action_type = "evm_transfer";
  a.payload_format = "evm_signing_data";
  a.payload = "0x02c0";
  a.payload_hash = "0xAB";
  auto r = build_sign_request(ctx, a, "0xab");
  BOOST_TEST(r.protocol_version == "1.0");
  BOOST_TEST(r.request_id == "req-1");
  BOOST_TEST(r.request_node_id == "node-1");
  BOOST_TEST(r.intent.action == "evm_transfer");
  BOOST_TEST(r.intent.asset == "ETH");
  BOOST_TEST(r.intent.amount == "1.5");
  BOOST_TEST(r.intent.destination == alice);
  BOOST_TEST(!r.intent.max_fee_usd.has_value());
  BOOST_TEST(r.intent.chain_family == "evm");
  BOOST_TEST(r.intent.allowed_payload_hash == "0xab"); // the engine's
  BOOST_TEST(r.payload_format == "evm_signing_data");
  BOOST_TEST(r.payload == "0x02c0");
  BOOST_TEST(r.payload_hash == "0xAB"); // the executor's
  BOOST_TEST(r.metadata == ctx.input_params);
  // chain_family defaults to "evm"; another one is passed through.
  ctx.input_params = R"({"chain_family": "solana"})";
  BOOST_TEST(build_sign_request(ctx, a, "").intent.chain_family == "solana");
  ctx.input_params = "{}";
  BOOST_TEST(build_sign_request(ctx, a, "").intent.chain_family == "evm");
  // No asset / destination: "" (the reference's str(intent.get(k, ''))).
  ctx.intent = R"({"amount": "2"})";
  auto bare = build_sign_request(ctx, a, "");
  BOOST_TEST(bare.intent.asset == "");
  BOOST_TEST(bare.intent.destination == "");
  BOOST_TEST(bare.intent.amount == "2");
}

// --- the decoder -------------------------------------------------------------

BOOST_AUTO_TEST_CASE(signing_policy_decodes_the_eip155_example_and_round_trips) {
  // The EIP's own signing data: nonce 9, 20 gwei, 21000 gas, 0x35…35, 1 ether, chain 1.
  auto data = bytes("0xec098504a817c800825208943535353535353535353535353535353535353535880de0b6"
                    "b3a764000080018080");
  auto tx = decode_evm_signing_data(data);
  BOOST_REQUIRE(tx.has_value());
  BOOST_TEST((tx->kind == evm_tx_kind::legacy_eip155));
  BOOST_TEST(tx->chain_id == 1u);
  BOOST_TEST(tx->nonce == uint256(9));
  BOOST_TEST(tx->max_fee_per_gas == dec("20000000000"));
  BOOST_TEST(tx->gas_limit == uint256(21000));
  BOOST_TEST(tx->to == bytes("0x3535353535353535353535353535353535353535"));
  BOOST_TEST(tx->value == dec("1000000000000000000"));
  BOOST_TEST(tx->data.empty());
  BOOST_TEST(encode_evm_signing_data(*tx) == data);
}

BOOST_AUTO_TEST_CASE(signing_policy_decodes_what_the_executor_encodes) {
  eip1559_tx t;
  t.chain_id = 1337;
  t.nonce = 3;
  t.max_priority_fee_per_gas = 1;
  t.max_fee_per_gas = 2;
  t.gas_limit = 65000;
  t.to = *parse_evm_address(token);
  t.data = erc20_transfer_calldata(*parse_evm_address(alice), uint256(5));
  auto data = signing_data(t);
  auto tx = decode_evm_signing_data(data);
  BOOST_REQUIRE(tx.has_value());
  BOOST_TEST((tx->kind == evm_tx_kind::eip1559));
  BOOST_TEST(tx->nonce == uint256(3));
  BOOST_TEST(tx->to == t.to);
  BOOST_TEST(tx->data == t.data);
  BOOST_TEST(tx->access_list.empty());
  BOOST_TEST(encode_evm_signing_data(*tx) == data);
}

BOOST_AUTO_TEST_CASE(signing_policy_decoder_refuses_non_canonical_or_malformed_bytes) {
  auto good = encode_evm_signing_data(native_tx());
  BOOST_TEST(decode_evm_signing_data(good).has_value());
  BOOST_TEST(!decode_evm_signing_data("").has_value());
  BOOST_TEST(!decode_evm_signing_data(good + '\0').has_value()); // trailing byte
  BOOST_TEST(!decode_evm_signing_data(good.substr(0, good.size() - 1)).has_value());
  BOOST_TEST(!decode_evm_signing_data(std::string("\x01", 1) + good.substr(1)).has_value());
  using namespace rlp;
  auto u = [](std::uint64_t v) {
    return encode_uint(uint256(v));
  };
  auto addr = encode_bytes(std::string(20, '\x35'));
  // Legacy: eight fields; r placeholder not 0; chain id 0; a 19-byte `to`;
  // an integer with a leading zero byte.
  BOOST_TEST(!decode_evm_signing_data(
                  encode_list({u(9), u(1), u(21000), addr, u(1), encode_bytes(""), u(1), u(0)}))
                  .has_value());
  BOOST_TEST(!decode_evm_signing_data(encode_list({u(9), u(1), u(21000), addr, u(1),
                                                   encode_bytes(""), u(1), u(1), u(0)}))
                  .has_value());
  BOOST_TEST(!decode_evm_signing_data(encode_list({u(9), u(1), u(21000), addr, u(1),
                                                   encode_bytes(""), u(0), u(0), u(0)}))
                  .has_value());
  BOOST_TEST(!decode_evm_signing_data(
                  encode_list({u(9), u(1), u(21000), encode_bytes(std::string(19, '\x35')), u(1),
                               encode_bytes(""), u(1), u(0), u(0)}))
                  .has_value());
  BOOST_TEST(
      !decode_evm_signing_data(encode_list({encode_bytes(std::string("\0\x09", 2)), u(1), u(21000),
                                            addr, u(1), encode_bytes(""), u(1), u(0), u(0)}))
           .has_value());
  BOOST_TEST(decode_evm_signing_data(encode_list({u(9), u(1), u(21000), addr, u(1),
                                                  encode_bytes(""), u(1), u(0), u(0)}))
                 .has_value());
  // EIP-1559 with an access list that is not a list.
  BOOST_TEST(!decode_evm_signing_data(std::string(1, '\x02') +
                                      encode_list({u(1), u(0), u(1), u(2), u(21000), addr, u(1),
                                                   encode_bytes(""), encode_bytes("")}))
                  .has_value());
}

BOOST_AUTO_TEST_SUITE_END()
