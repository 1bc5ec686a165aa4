// The executor/signer port's values as JSON (domain/provider_json.hpp):
// what crosses the wire to a sibling's remote provider comes back equal,
// and a malformed answer is an executor_error, never a guessed value.
#include "domain/provider_json.hpp"

#include <boost/test/unit_test.hpp>

using namespace mg::domain;

BOOST_AUTO_TEST_SUITE(cluster_provider_json)

BOOST_AUTO_TEST_CASE(execution_context_round_trip) {
  execution_context c;
  c.request_id = "r-1";
  c.request_node_id = "n-1";
  c.compiled_plan_hash = "abc";
  c.template_key = "t\"q";
  c.template_version = 3;
  c.node_key = "send";
  c.node_kind = "action";
  c.action_type = "chain_transfer";
  c.attempt_no = 2;
  c.intent = R"({"asset":"USDC","amount":"5"})";
  c.node_config = R"({"sim":{"latency_ms":1},"list":[1,2]})";
  c.prior_artifacts = R"([{"a":1}])";
  c.idempotency_key = "n-1:2";
  c.provider_refs = R"({"x":"y"})";
  auto back = execution_context_from_json(to_json(c));
  BOOST_TEST(back.protocol_version == c.protocol_version);
  BOOST_TEST(back.request_id == c.request_id);
  BOOST_TEST(back.request_node_id == c.request_node_id);
  BOOST_TEST(back.compiled_plan_hash == c.compiled_plan_hash);
  BOOST_TEST(back.template_key == c.template_key);
  BOOST_TEST(back.template_version == 3);
  BOOST_TEST(back.node_key == c.node_key);
  BOOST_TEST(back.node_kind == c.node_kind);
  BOOST_TEST(back.action_type == c.action_type);
  BOOST_TEST(back.attempt_no == 2);
  BOOST_TEST(back.intent == c.intent);
  BOOST_TEST(back.node_config == c.node_config);
  BOOST_TEST(back.prior_artifacts == c.prior_artifacts);
  BOOST_TEST(back.input_params == "{}");
  BOOST_TEST(back.idempotency_key == c.idempotency_key);
  BOOST_TEST(back.provider_refs == c.provider_refs);
}

BOOST_AUTO_TEST_CASE(step_result_round_trip) {
  step_result r;
  r.next_state = node_state::submitted;
  r.provider_state = "SUBMITTED";
  r.provider_refs = R"({"tx_hash":"0x1"})";
  r.provider_ref_id = "ref-1";
  r.generated_artifacts = R"([{"k":"v"}])";
  r.retry_after_seconds = 0.1;
  r.error_code = "E";
  r.error_detail = "line\nbreak";
  auto back = step_result_from_json(to_json(r));
  BOOST_TEST((back.next_state == node_state::submitted));
  BOOST_TEST(back.provider_state == r.provider_state);
  BOOST_TEST(back.provider_refs == r.provider_refs);
  BOOST_TEST(back.provider_ref_id == r.provider_ref_id);
  BOOST_TEST(back.generated_artifacts == r.generated_artifacts);
  BOOST_TEST(back.retry_after_seconds.value_or(-1) == 0.1);
  BOOST_TEST(back.error_detail == r.error_detail);

  step_result empty;
  auto e = step_result_from_json(to_json(empty));
  BOOST_TEST(!e.next_state.has_value());
  BOOST_TEST(!e.retry_after_seconds.has_value());
  BOOST_TEST(!optional_step_result_from_json(to_json(std::optional<step_result>())).has_value());
  BOOST_TEST(optional_step_result_from_json(to_json(std::optional<step_result>(r))).has_value());
}

BOOST_AUTO_TEST_CASE(sign_request_and_result_round_trip) {
  sign_request q;
  q.request_id = "r";
  q.request_node_id = "n";
  q.intent.action = "transfer";
  q.intent.asset = "USDC";
  q.intent.amount = "5";
  q.intent.destination = "0xabc";
  q.intent.max_fee_usd = "1.5";
  q.intent.allowed_payload_hash = "h";
  q.payload_format = "json";
  q.payload = R"({"a":1})";
  q.payload_hash = "h";
  q.metadata = R"({"m":true})";
  auto back = sign_request_from_json(to_json(q));
  BOOST_TEST(back.intent.action == "transfer");
  BOOST_TEST(back.intent.destination == "0xabc");
  BOOST_TEST(back.intent.max_fee_usd.value_or("") == "1.5");
  BOOST_TEST(back.intent.chain_family == "evm");
  BOOST_TEST(back.intent.allowed_payload_hash == "h");
  BOOST_TEST(back.payload == q.payload);
  BOOST_TEST(back.payload_hash == "h");
  BOOST_TEST(back.metadata == q.metadata);

  sign_result s{"sig", "0xsigner"};
  auto sb = sign_result_from_json(to_json(s));
  BOOST_TEST(sb.signature == "sig");
  BOOST_TEST(sb.signer_address == "0xsigner");
  BOOST_TEST(!optional_sign_result_from_json(to_json(static_cast<const sign_result*>(nullptr)))
                  .has_value());
}

BOOST_AUTO_TEST_CASE(recover_and_prepare_round_trip) {
  recover_result r;
  r.outcome = recover_outcome::fenced;
  r.result.next_state = node_state::ready;
  auto back = recover_result_from_json(to_json(r));
  BOOST_TEST((back.outcome == recover_outcome::fenced));
  BOOST_TEST((back.result.next_state == node_state::ready));
  prepared_action a{"chain_transfer", "json", R"({"x":1})", "hh"};
  auto ab = optional_prepared_action_from_json(to_json(std::optional<prepared_action>(a)));
  BOOST_TEST(ab->payload == a.payload);
  BOOST_TEST(!optional_prepared_action_from_json("null").has_value());
}

BOOST_AUTO_TEST_CASE(malformed_answers_throw_executor_error) {
  BOOST_CHECK_THROW(step_result_from_json("not json"), executor_error);
  BOOST_CHECK_THROW(step_result_from_json(R"({"next_state":"NOPE"})"), executor_error);
  BOOST_CHECK_THROW(recover_result_from_json(R"({"outcome":"maybe"})"), executor_error);
  BOOST_CHECK_THROW(execution_context_from_json("[]"), executor_error);
  BOOST_TEST(health_result_from_json("{}").up == false);
}

// RapidJSON's own parser takes a NUL byte for the end of its input, so an
// answer could carry anything after one; the hostile-input reader reads
// every byte.
BOOST_AUTO_TEST_CASE(nothing_after_a_nul_byte_hides_in_an_answer) {
  const std::string good = R"({"next_state":"COMPLETED"})";
  BOOST_CHECK_NO_THROW(step_result_from_json(good));
  BOOST_CHECK_THROW(step_result_from_json(good + std::string(1, '\0')), executor_error);
  BOOST_CHECK_THROW(
      step_result_from_json(good + std::string(1, '\0') + R"({"next_state":"FAILED"})"),
      executor_error);
}

BOOST_AUTO_TEST_SUITE_END()
