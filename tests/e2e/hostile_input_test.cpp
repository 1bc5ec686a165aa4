// SPEC §5 "Hostile input" against a real `movegate serve`: duplicate member
// names cannot walk around a risk limit, a 500 000-deep body cannot crash
// the process, bad string bytes are 4xx (never 503) with a valid JSON error
// body and nothing changed, amounts round-trip exactly into jsonb, and the
// amount grammar refuses leading zeros.
#include <boost/test/unit_test.hpp>

#include "domain/json.hpp"
#include "domain/json_reader.hpp"
#include "tests/support/api_client.hpp"
#include "tests/support/serve_fixture.hpp"

using namespace mg;

namespace {

using key = test::api_key_spec;

const key creator{"creator", "c0ffee00c0ffee00c0ffee00c0ffee00", R"(["create", "read"])"};
const key approver{"approver", "a11ce000a11ce000a11ce000a11ce000", R"(["approve", "read"])"};

std::string limited_template() {
  return R"({"template_key": "limited", "version": 1,
    "risk_controls": {"max_amount": "250000"},
    "nodes": [{"node_key": "send", "action_type": "chain_transfer", "executor_key": "sim",
               "side_effect": true, "config": {"to": "$ref:input.venue"}}],
    "edges": []})";
}

std::string open_template() {
  return R"({"template_key": "open", "version": 1,
    "nodes": [{"node_key": "send", "action_type": "chain_transfer", "executor_key": "sim",
               "side_effect": true, "config": {"to": "0xabc"}}],
    "edges": []})";
}

std::string body_with(const std::string& intent, const std::string& idem,
                      const std::string& input_params = R"({"venue": "0xabc"})") {
  return R"({"template_key": "limited", "intent": )" + intent + R"(, "input_params": )" +
         input_params + R"(, "idempotency_key": ")" + idem + "\"}";
}

struct hostile_fixture : test::serve_fixture {
  hostile_fixture() {
    add_template(limited_template());
    add_template(open_template());
    keys = {creator, approver};
  }

  std::string rows() {
    return scalar(R"(SELECT concat_ws('|',
      (SELECT count(*) FROM movement_requests),
      (SELECT md5(coalesce(string_agg(r::text, ',' ORDER BY id), '')) FROM movement_requests r),
      (SELECT md5(coalesce(string_agg(n::text, ',' ORDER BY id), '')) FROM movement_request_nodes n),
      (SELECT count(*) FROM movement_events), (SELECT count(*) FROM audit_outbox)))");
  }

  /// A 4xx with SPEC §5's error body, valid by the strict reader.
  void expect_refused(const test::api_reply& r, int low = 400, int high = 499) {
    BOOST_TEST((r.status >= low && r.status <= high), r.status << " " << r.body);
    auto body = json::read(r.body);
    BOOST_TEST(body.has_value(), "error body is not valid JSON: " << r.body);
    BOOST_TEST((body && body->doc.IsObject() && body->doc.HasMember("error")));
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(hostile_input)

BOOST_FIXTURE_TEST_CASE(duplicate_member_names_are_400_and_store_nothing, hostile_fixture) {
  start();
  auto c = client(creator);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"amount twice in intent",
       body_with(R"({"asset": "USDC", "amount": "1", "amount": "9000000"})", "dup-1")},
      {"intent twice",
       R"({"template_key": "limited", "intent": {"asset": "USDC", "amount": "1"},)"
       R"( "intent": {"asset": "USDC", "amount": "9000000"}, "idempotency_key": "dup-2"})"},
      {"venue twice in input_params", body_with(R"({"asset": "USDC", "amount": "1"})", "dup-3",
                                                R"({"venue": "0xabc", "venue": "0xevil"})")},
      {"idempotency_key twice",
       R"({"template_key": "limited", "intent": {"asset": "USDC", "amount": "1"},)"
       R"( "idempotency_key": "dup-4", "idempotency_key": "dup-5"})"},
  };
  for (const auto& [name, body] : cases) {
    BOOST_TEST_CONTEXT(name) {
      auto r = c.post("/v3/movements", body);
      BOOST_TEST(r.status == 400, r.body);
      expect_refused(r);
      BOOST_TEST(count("SELECT count(*) FROM movement_requests") == 0);
    }
  }
  // The same request without the duplicate is accepted, and its limit holds.
  auto ok = c.post("/v3/movements", body_with(R"({"asset": "USDC", "amount": "1"})", "dup-ok"));
  BOOST_TEST(ok.status == 201, ok.body);
  BOOST_TEST(scalar("SELECT intent->>'amount' FROM movement_requests") == "1");
}

BOOST_FIXTURE_TEST_CASE(a_500000_deep_body_is_400_and_the_process_lives, hostile_fixture) {
  start();
  auto c = client(creator);
  auto pending = c.post("/v3/movements", body_with(R"({"asset": "USDC", "amount": "5"})", "p-1"));
  BOOST_REQUIRE_MESSAGE(pending.status == 201, pending.body);
  const auto id = test::json_field(pending.body, "id");
  const auto before = rows();
  const std::string deep = std::string(500000, '[') + std::string(500000, ']');
  BOOST_REQUIRE(deep.size() < 1024 * 1024);
  const std::string deep_objects = [] {
    std::string s;
    for (int i = 0; i < 100000; ++i)
      s += "{\"a\":";
    return s + "1" + std::string(100000, '}');
  }();
  for (const auto* body : {&deep, &deep_objects}) {
    expect_refused(c.post("/v3/movements", *body), 400, 400);
    expect_refused(client(approver).post("/v3/movements/" + id + "/reject", *body), 400, 400);
    // Inside an otherwise good body too.
    expect_refused(
        c.post("/v3/movements",
               body_with(R"({"asset": "USDC", "amount": "1", "x": )" + *body + "}", "deep-1")),
        400, 400);
  }
  BOOST_TEST(server->running());
  BOOST_TEST(c.get("/v3/movements/" + id).status == 200);
  BOOST_TEST(rows() == before);
}

BOOST_FIXTURE_TEST_CASE(bad_string_bytes_are_4xx_with_rows_unchanged, hostile_fixture) {
  start();
  auto c = client(creator);
  auto a = client(approver);
  auto pending = c.post("/v3/movements", body_with(R"({"asset": "USDC", "amount": "5"})", "p-2"));
  BOOST_REQUIRE_MESSAGE(pending.status == 201, pending.body);
  const auto id = test::json_field(pending.body, "id");
  // Each bad string: as a JSON escape or raw bytes inside a JSON string,
  // and the same as it appears in a URL.
  const std::vector<std::pair<std::string, std::string>> in_json = {
      {"NUL", "\\u0000"},
      {"lone low surrogate", "\\udc00"},
      {"lone high surrogate", "\\ud800"},
      {"raw 0xFF", "\xff"},
      {"encoded surrogate", "\xed\xb0\x80"}};
  const std::vector<std::pair<std::string, std::string>> in_url = {
      {"NUL", "%00"}, {"encoded surrogate", "%ED%B0%80"}, {"0xFF", "%FF"}, {"raw 0xFF", "\xff"}};

  const auto before = rows();
  auto check = [&](const std::string& what, const test::api_reply& r) {
    BOOST_TEST_CONTEXT(what) {
      expect_refused(r);
      BOOST_TEST(rows() == before);
    }
  };
  for (const auto& [name, bad] : in_json) {
    const std::string s = "x" + bad + "y";
    check("intent.asset " + name,
          c.post("/v3/movements", body_with(R"({"asset": ")" + s + R"(", "amount": "1"})", "s-1")));
    check("intent.destination " + name,
          c.post("/v3/movements",
                 body_with(R"({"asset": "USDC", "amount": "1", "destination": ")" + s + "\"}",
                           "s-2")));
    check("intent member name " + name,
          c.post("/v3/movements",
                 body_with(R"({"asset": "USDC", "amount": "1", ")" + s + "\": 1}", "s-3")));
    check("input_params " + name,
          c.post("/v3/movements", body_with(R"({"asset": "USDC", "amount": "1"})", "s-4",
                                            R"({"venue": ")" + s + "\"}")));
    check("idempotency_key " + name,
          c.post("/v3/movements", body_with(R"({"asset": "USDC", "amount": "1"})", s)));
    check("reject reason " + name,
          a.post("/v3/movements/" + id + "/reject", R"({"reason": ")" + s + "\"}"));
    check("cancel reason " + name,
          a.post("/v3/movements/" + id + "/cancel", R"({"reason": ")" + s + "\"}"));
    check("approver_id " + name,
          a.post("/v3/movements/" + id + "/approve", R"({"approver_id": ")" + s + "\"}"));
  }
  for (const auto& [name, bad] : in_url) {
    check("cursor " + name, c.get("/v3/movements?cursor=" + bad));
    check("events cursor " + name, c.get("/v3/movements/" + id + "/events?cursor=" + bad));
    check("state " + name, c.get("/v3/movements?state=" + bad));
    check("path id " + name, c.get("/v3/movements/" + bad));
    check("path id on approve " + name, a.post("/v3/movements/" + bad + "/approve"));
    check("node_key in path " + name,
          a.post("/v3/movements/" + id + "/nodes/" + bad + "/complete", "{}"));
    check("template key in path " + name, c.get("/v3/templates/" + bad));
  }
  BOOST_TEST(server->running());
  BOOST_TEST(test::json_field(c.get("/v3/movements/" + id).body, "request_state") ==
             "PENDING_APPROVAL");
}

BOOST_FIXTURE_TEST_CASE(amounts_and_numbers_round_trip_exactly_into_jsonb, hostile_fixture) {
  start();
  auto c = client(creator);
  const std::string forty_digits = "1234567890123456789012345678901234567890";
  const std::string eighteen_decimals = "0.123456789012345678";
  const std::string big_number = "10000000000000000000000000000000000000000"; // 10^40
  const std::string fine_number = "0.100000000000000000000000000001";
  int n = 0;
  for (const auto& amount : {forty_digits, eighteen_decimals}) {
    BOOST_TEST_CONTEXT(amount) {
      const std::string intent = R"({"amount":")" + amount + R"(","asset":"USDC","n":)" +
                                 big_number + R"(,"f":)" + fine_number + "}";
      auto r =
          c.post("/v3/movements",
                 R"({"template_key": "open", "intent": )" + intent + R"(, "input_params": {"q": )" +
                     big_number + R"(}, "idempotency_key": "exact-)" + std::to_string(++n) + "\"}");
      BOOST_REQUIRE_MESSAGE(r.status == 201, r.body);
      const auto id = test::json_field(r.body, "id");
      BOOST_TEST(scalar("SELECT intent->>'amount' FROM movement_requests WHERE id = '" + id +
                        "'") == amount);
      BOOST_TEST(scalar("SELECT (intent->'n')::text FROM movement_requests WHERE id = '" + id +
                        "'") == big_number);
      BOOST_TEST(scalar("SELECT (intent->'f')::text FROM movement_requests WHERE id = '" + id +
                        "'") == fine_number);
      BOOST_TEST(scalar("SELECT (input_params->'q')::text FROM movement_requests WHERE id = '" +
                        id + "'") == big_number);
      // The whole stored intent is the document sent (jsonb equality).
      BOOST_TEST(scalar("SELECT intent = '" + intent +
                        "'::jsonb FROM movement_requests WHERE id = '" + id + "'") == "t");
    }
  }
}

BOOST_FIXTURE_TEST_CASE(amount_grammar_refuses_leading_zeros, hostile_fixture) {
  start();
  auto c = client(creator);
  for (const std::string bad : {"01", "00.5", "007", "00"}) {
    BOOST_TEST_CONTEXT(bad) {
      auto r = c.post("/v3/movements",
                      body_with(R"({"asset": "USDC", "amount": ")" + bad + "\"}", "lz-" + bad));
      BOOST_TEST(r.status == 422, r.body);
    }
  }
  BOOST_TEST(count("SELECT count(*) FROM movement_requests") == 0);
  for (const std::string good : {"0.5", "10", "100.05"}) {
    BOOST_TEST_CONTEXT(good) {
      auto r = c.post("/v3/movements",
                      body_with(R"({"asset": "USDC", "amount": ")" + good + "\"}", "ok-" + good));
      BOOST_TEST(r.status == 201, r.body);
    }
  }
}

BOOST_FIXTURE_TEST_CASE(a_second_signature_header_after_the_valid_one_is_401, hostile_fixture) {
  start();
  auto c = client(creator);
  test::request_options o;
  o.repeat_headers = {{"X-QTG-Signature", std::string(64, '0')}};
  auto r = c.post("/v3/movements", body_with(R"({"asset": "USDC", "amount": "1"})", "sig-2"), o);
  BOOST_TEST(r.status == 401, r.body);
  BOOST_TEST(count("SELECT count(*) FROM movement_requests") == 0);
}

BOOST_AUTO_TEST_SUITE_END()
