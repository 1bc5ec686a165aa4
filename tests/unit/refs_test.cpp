// resolve_refs: `$ref` substitution in a node's config at dispatch (SPEC §3).
#include "domain/refs.hpp"

#include <boost/test/unit_test.hpp>

#include <map>
#include <string>

using namespace mg::domain;

namespace {

const std::string input = R"({"venue": "binance", "amount": "100.50", "chain_id": 8453,
                             "flags": {"fast": true}, "memo": null})";

const std::map<std::string, std::string> completed = {
    {"withdraw", R"({"withdrawal_id": "w-1", "fee": 3, "confirmed": true})"},
    {"quiet", ""},
};

void require_failure(const ref_resolution& r, const std::string& fragment) {
  BOOST_TEST_INFO(r.error);
  BOOST_TEST(!r.ok);
  BOOST_TEST(r.config_json.empty());
  BOOST_TEST(r.error.find(fragment) != std::string::npos);
}

} // namespace

BOOST_AUTO_TEST_SUITE(refs)

BOOST_AUTO_TEST_CASE(config_without_refs_unchanged) {
  auto r = resolve_refs(R"({"a": 1, "b": "x", "c": {"d": "$ref:input.venue"}})", input, {});
  BOOST_TEST_INFO(r.error);
  BOOST_REQUIRE(r.ok);
  // Nested values are not refs: only top-level strings are replaced.
  BOOST_TEST(r.config_json == R"({"a":1,"b":"x","c":{"d":"$ref:input.venue"}})");
}

BOOST_AUTO_TEST_CASE(input_refs_keep_their_type) {
  auto r = resolve_refs(
      R"({"venue": "$ref:input.venue", "chain": "$ref:input.chain_id",
          "flags": "$ref:input.flags", "memo": "$ref:input.memo", "amount": "$ref:input.amount"})",
      input, {});
  BOOST_TEST_INFO(r.error);
  BOOST_REQUIRE(r.ok);
  BOOST_TEST(r.config_json ==
             R"({"venue":"binance","chain":8453,"flags":{"fast":true},"memo":null,)"
             R"("amount":"100.50"})");
}

BOOST_AUTO_TEST_CASE(node_refs_keep_their_type) {
  auto r = resolve_refs(R"({"id": "$ref:withdraw.withdrawal_id", "fee": "$ref:withdraw.fee",
                            "ok": "$ref:withdraw.confirmed", "static": 7})",
                        "{}", completed);
  BOOST_TEST_INFO(r.error);
  BOOST_REQUIRE(r.ok);
  BOOST_TEST(r.config_json == R"({"id":"w-1","fee":3,"ok":true,"static":7})");
}

BOOST_AUTO_TEST_CASE(empty_input_params_read_as_empty_object) {
  auto r = resolve_refs(R"({"id": "$ref:withdraw.withdrawal_id"})", "", completed);
  BOOST_TEST_INFO(r.error);
  BOOST_TEST(r.ok);
  require_failure(resolve_refs(R"({"v": "$ref:input.venue"})", "", {}),
                  "$ref:input.venue: input_params has no field 'venue'");
}

BOOST_AUTO_TEST_CASE(unknown_node_fails) {
  require_failure(resolve_refs(R"({"x": "$ref:ghost.id"})", input, completed),
                  "$ref:ghost.id: node 'ghost' is unknown or has not completed");
}

BOOST_AUTO_TEST_CASE(node_not_completed_fails) {
  // "bridge" is a real plan node that has not completed, so it is not in the map.
  require_failure(resolve_refs(R"({"x": "$ref:bridge.tx_hash"})", input, completed),
                  "$ref:bridge.tx_hash: node 'bridge' is unknown or has not completed");
}

BOOST_AUTO_TEST_CASE(missing_input_field_fails) {
  require_failure(resolve_refs(R"({"x": "$ref:input.nope"})", input, completed),
                  "$ref:input.nope: input_params has no field 'nope'");
}

BOOST_AUTO_TEST_CASE(missing_provider_field_fails) {
  require_failure(resolve_refs(R"({"x": "$ref:withdraw.tx_hash"})", input, completed),
                  "$ref:withdraw.tx_hash: provider_refs of node 'withdraw' has no field 'tx_hash'");
  // A completed node without provider_refs has no fields at all.
  require_failure(resolve_refs(R"({"x": "$ref:quiet.id"})", input, completed),
                  "$ref:quiet.id: provider_refs of node 'quiet' has no field 'id'");
}

BOOST_AUTO_TEST_CASE(malformed_ref_fails) {
  require_failure(resolve_refs(R"({"x": "$ref:withdraw"})", input, completed),
                  "$ref:withdraw: malformed");
  require_failure(resolve_refs(R"({"x": "$ref:input."})", input, completed),
                  "$ref:input.: malformed");
  require_failure(resolve_refs(R"({"x": "$ref:.id"})", input, completed), "$ref:.id: malformed");
}

BOOST_AUTO_TEST_CASE(every_failing_ref_reported) {
  auto r = resolve_refs(R"({"a": "$ref:ghost.id", "b": "$ref:input.venue", "c": "$ref:input.x"})",
                        input, completed);
  BOOST_TEST_INFO(r.error);
  BOOST_TEST(!r.ok);
  BOOST_TEST(r.error.find("$ref:ghost.id") != std::string::npos);
  BOOST_TEST(r.error.find("$ref:input.x") != std::string::npos);
  BOOST_TEST(r.error.find("$ref:input.venue") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(invalid_sources_fail) {
  require_failure(resolve_refs("[1]", input, completed), "config is not a JSON object");
  require_failure(resolve_refs(R"({"x": "$ref:input.a"})", "[1]", completed),
                  "input_params is not a JSON object");
  require_failure(resolve_refs(R"({"x": "$ref:bad.a"})", input, {{"bad", "not json"}}),
                  "provider_refs of node 'bad' is not a JSON object");
}

BOOST_AUTO_TEST_SUITE_END()
