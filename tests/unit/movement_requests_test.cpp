// Pure checks of the movement calls' bodies and parameters (SPEC §5):
// 400 for missing fields, wrong JSON types and unknown fields; 422 for
// amounts, idempotency keys and callback URLs that are well-formed JSON but
// invalid; exact decimal comparison; ids and cursors.
#include "domain/movement_requests.hpp"

#include <boost/test/unit_test.hpp>

#include <string>

using namespace mg;
using namespace mg::domain;

namespace {

const char* valid_body = R"({"template_key": "t", "template_version": 2,
  "intent": {"asset": "USDC", "amount": "10.5", "destination": "0xabc", "memo": {"x": [1, 2]}},
  "input_params": {"venue": "sim"}, "callback_url": "https://example.com/cb",
  "idempotency_key": "order-1:a.b_c-d"})";

json::document parse(const std::string& text) {
  return json::parse_trusted(text, "test body");
}

checked<create_body> create(const std::string& text, bool allow_private = false) {
  auto d = parse(text);
  return parse_create_body(d, allow_private);
}

/// The create body with `member` replaced by `json` (or removed when json
/// is empty).
std::string body_with(const std::string& member, const std::string& json) {
  auto d = parse(valid_body);
  d.RemoveMember(member.c_str());
  std::string out = json::dump(d);
  if (json.empty())
    return out;
  out.pop_back();
  return out + ",\"" + member + "\":" + json + "}";
}

std::string intent_with(const std::string& member, const std::string& json) {
  std::string intent = R"({"asset": "USDC", "amount": "1")";
  if (member == "asset")
    intent = R"({"amount": "1")";
  if (member == "amount")
    intent = R"({"asset": "USDC")";
  if (!json.empty())
    intent += ",\"" + member + "\":" + json;
  return body_with("intent", intent + "}");
}

int status(const checked<create_body>& c) {
  return c.ok() ? 0 : c.error.status;
}

bool names_field(const api::error& e, const std::string& field) {
  for (auto& d : e.details)
    if (d.field == field)
      return true;
  return false;
}

int amount_status(const std::string& amount) {
  return status(create(intent_with("amount", "\"" + amount + "\"")));
}

int url_status(const std::string& url, bool allow_private = false) {
  return status(create(body_with("callback_url", "\"" + url + "\""), allow_private));
}

} // namespace

BOOST_AUTO_TEST_SUITE(movement_requests)

BOOST_AUTO_TEST_CASE(valid_create_body_is_parsed) {
  auto c = create(valid_body);
  BOOST_REQUIRE(c.ok());
  auto& b = *c.value;
  BOOST_TEST(b.template_key == "t");
  BOOST_TEST(b.template_version == 2);
  BOOST_TEST(b.amount == "10.5");
  BOOST_TEST(b.callback_url == "https://example.com/cb");
  BOOST_TEST(b.idempotency_key == "order-1:a.b_c-d");
  BOOST_TEST(parse(b.intent)["memo"]["x"][1].GetInt() == 2); // further fields kept
  BOOST_TEST(parse(b.input_params)["venue"].GetString() == std::string("sim"));
  BOOST_TEST(b.body_hash.size() == 64u);
}

BOOST_AUTO_TEST_CASE(signing_policy_non_string_signrequest_fields_are_refused_with_422) {
  // The SignRequest carries them as strings: a number, object or null would
  // reach the signer as "" (or some rendering of it).
  for (const char* bad : {"1", "{\"a\": 1}", "null", "[\"0xabc\"]", "true"}) {
    auto c = create(intent_with("destination", bad));
    BOOST_TEST(status(c) == 422, bad);
    BOOST_TEST(names_field(c.error, "intent.destination"), bad);
    auto s = create(intent_with("source", bad));
    BOOST_TEST(names_field(s.error, "intent.source"), bad);
    auto f = create(body_with("input_params", std::string("{\"chain_family\": ") + bad + "}"));
    BOOST_TEST(status(f) == 422, bad);
    BOOST_TEST(names_field(f.error, "input_params.chain_family"), bad);
  }
  BOOST_TEST(create(intent_with("destination", "\"0xabc\"")).ok());
  BOOST_TEST(create(body_with("input_params", R"({"chain_family": "evm"})")).ok());
  // asset and amount: required strings already (400 for another type).
  BOOST_TEST(status(create(intent_with("asset", "5"))) == 400);
  BOOST_TEST(status(create(intent_with("amount", "5"))) == 400);
}

BOOST_AUTO_TEST_CASE(optional_fields_may_be_left_out) {
  auto c = create(R"({"template_key": "t", "intent": {"asset": "A", "amount": "1"},
                      "idempotency_key": "k"})");
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(c.value->template_version == 0);
  BOOST_TEST(c.value->input_params == "{}");
  BOOST_TEST(c.value->callback_url.empty());
}

BOOST_AUTO_TEST_CASE(body_hash_is_equal_after_json_parsing) {
  auto a =
      create(R"({"template_key":"t","intent":{"asset":"A","amount":"1"},"idempotency_key":"k"})");
  auto b = create(R"({ "idempotency_key" : "k", "intent": {"amount": "1", "asset": "A"},
                       "template_key": "t" })");
  auto c =
      create(R"({"template_key":"t","intent":{"asset":"A","amount":"2"},"idempotency_key":"k"})");
  BOOST_REQUIRE(a.ok());
  BOOST_REQUIRE(b.ok());
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(a.value->body_hash == b.value->body_hash);
  BOOST_TEST(a.value->body_hash != c.value->body_hash);
}

BOOST_AUTO_TEST_CASE(body_that_is_not_an_object_is_400) {
  BOOST_TEST(status(create("[]")) == 400);
  BOOST_TEST(status(create("\"x\"")) == 400);
  BOOST_TEST(status(create("null")) == 400);
}

BOOST_AUTO_TEST_CASE(missing_required_fields_are_400) {
  for (auto field : {"template_key", "intent", "idempotency_key"}) {
    auto c = create(body_with(field, ""));
    BOOST_TEST(status(c) == 400, field);
    BOOST_TEST(names_field(c.error, field), field);
  }
  BOOST_TEST(status(create(intent_with("asset", ""))) == 400);
  BOOST_TEST(status(create(intent_with("amount", ""))) == 400);
  BOOST_TEST(names_field(create(intent_with("amount", "")).error, "intent.amount"));
}

BOOST_AUTO_TEST_CASE(wrong_json_types_are_400) {
  BOOST_TEST(status(create(body_with("template_key", "1"))) == 400);
  BOOST_TEST(status(create(body_with("template_key", "null"))) == 400);
  BOOST_TEST(status(create(body_with("template_version", "\"2\""))) == 400);
  BOOST_TEST(status(create(body_with("template_version", "2.5"))) == 400);
  BOOST_TEST(status(create(body_with("template_version", "true"))) == 400);
  BOOST_TEST(status(create(body_with("intent", "\"x\""))) == 400);
  BOOST_TEST(status(create(body_with("intent", "[]"))) == 400);
  BOOST_TEST(status(create(body_with("input_params", "[]"))) == 400);
  BOOST_TEST(status(create(body_with("input_params", "\"x\""))) == 400);
  BOOST_TEST(status(create(body_with("callback_url", "5"))) == 400);
  BOOST_TEST(status(create(body_with("idempotency_key", "12"))) == 400);
  BOOST_TEST(status(create(intent_with("asset", "5"))) == 400);
  BOOST_TEST(status(create(intent_with("amount", "10"))) == 400);   // a number, not a string
  BOOST_TEST(status(create(intent_with("amount", "10.5"))) == 400); // never a float
}

BOOST_AUTO_TEST_CASE(unknown_top_level_field_is_400) {
  auto c = create(body_with("extra", "1"));
  BOOST_TEST(status(c) == 400);
  BOOST_TEST(names_field(c.error, "extra"));
  // Further intent fields are kept, not refused.
  BOOST_TEST(status(create(intent_with("note", "\"x\""))) == 0);
}

BOOST_AUTO_TEST_CASE(bad_request_wins_over_unprocessable_and_lists_all) {
  auto c = create(R"({"template_key": 1, "intent": {"asset": "A", "amount": "-1"},
                      "idempotency_key": "bad key", "x": 1})");
  BOOST_TEST(c.error.status == 400);
  BOOST_TEST(names_field(c.error, "template_key"));
  BOOST_TEST(names_field(c.error, "x"));
  auto d = create(R"({"template_key": "t", "intent": {"asset": "A", "amount": "-1"},
                      "idempotency_key": "bad key"})");
  BOOST_TEST(d.error.status == 422);
  BOOST_TEST(names_field(d.error, "intent.amount"));
  BOOST_TEST(names_field(d.error, "idempotency_key"));
}

BOOST_AUTO_TEST_CASE(amount_formats) {
  BOOST_TEST(amount_status("1") == 0);
  BOOST_TEST(amount_status("0.5") == 0);
  BOOST_TEST(amount_status("250000.000001") == 0);
  // SPEC §5: no leading zero before another digit.
  BOOST_TEST(amount_status("007") == 422);
  BOOST_TEST(amount_status("01") == 422);
  BOOST_TEST(amount_status("00.5") == 422);
  BOOST_TEST(amount_status("10.05") == 0);
  BOOST_TEST(amount_status(std::string(78, '9')) == 0);
  BOOST_TEST(amount_status(std::string(40, '1') + "." + std::string(38, '1')) == 0);
  BOOST_TEST(amount_status("0") == 422);
  BOOST_TEST(amount_status("0.000") == 422);
  BOOST_TEST(amount_status("-1") == 422);
  BOOST_TEST(amount_status("+1") == 422);
  BOOST_TEST(amount_status("1e5") == 422);
  BOOST_TEST(amount_status("1E5") == 422);
  BOOST_TEST(amount_status("1.") == 422);
  BOOST_TEST(amount_status(".5") == 422);
  BOOST_TEST(amount_status("") == 422);
  BOOST_TEST(amount_status(" 1") == 422);
  BOOST_TEST(amount_status("1,5") == 422);
  BOOST_TEST(amount_status("1.2.3") == 422);
  BOOST_TEST(amount_status("0x10") == 422);
  BOOST_TEST(amount_status(std::string(79, '9')) == 422);
  BOOST_TEST(amount_status(std::string(40, '1') + "." + std::string(39, '1')) == 422);
  BOOST_TEST(amount_status("\xef\xbc\x91") == 422); // "１", a full-width digit
  BOOST_TEST(amount_status("NaN") == 422);
}

BOOST_AUTO_TEST_CASE(decimals_compare_exactly) {
  BOOST_TEST(compare_decimals("250000", "250000") == 0);
  BOOST_TEST(compare_decimals("250000.000000", "250000") == 0);
  BOOST_TEST(compare_decimals("0250000", "250000") == 0);
  BOOST_TEST(compare_decimals("250000.000001", "250000") > 0);
  BOOST_TEST(compare_decimals("249999.999999", "250000") < 0);
  BOOST_TEST(compare_decimals("1.1", "1.09") > 0);
  BOOST_TEST(compare_decimals("10", "9.99") > 0);
  BOOST_TEST(compare_decimals("0.1", "0.10000000000000000000000000001") < 0);
  // Beyond double precision: floats would call these equal.
  BOOST_TEST(compare_decimals("9007199254740993", "9007199254740992") > 0);
}

BOOST_AUTO_TEST_CASE(idempotency_key_formats) {
  auto key_status = [](const std::string& json) {
    return status(create(body_with("idempotency_key", json)));
  };
  BOOST_TEST(key_status("\"a\"") == 0);
  BOOST_TEST(key_status("\"A-z_0.9:x\"") == 0);
  BOOST_TEST(key_status("\"" + std::string(128, 'k') + "\"") == 0);
  BOOST_TEST(key_status("\"\"") == 422);
  BOOST_TEST(key_status("\"" + std::string(129, 'k') + "\"") == 422);
  BOOST_TEST(key_status("\"a b\"") == 422);
  BOOST_TEST(key_status("\"a/b\"") == 422);
  BOOST_TEST(key_status("\"caf\xc3\xa9\"") == 422);
  BOOST_TEST(key_status("7") == 400);
  BOOST_TEST(key_status("null") == 400);
}

BOOST_AUTO_TEST_CASE(callback_urls) {
  BOOST_TEST(url_status("https://example.com/cb") == 0);
  BOOST_TEST(url_status("http://example.com:8080/cb?x=1") == 0);
  BOOST_TEST(url_status("HTTPS://Example.COM") == 0);
  BOOST_TEST(url_status("https://8.8.8.8/cb") == 0);
  BOOST_TEST(url_status("https://[2001:db8::1]:443/cb") == 0);
  BOOST_TEST(url_status("https://user:pw@example.com/") == 422);
  BOOST_TEST(url_status("ftp://example.com/") == 422);
  BOOST_TEST(url_status("example.com/cb") == 422);
  BOOST_TEST(url_status("javascript:alert(1)") == 422);
  BOOST_TEST(url_status("https:///path") == 422);
  BOOST_TEST(url_status("https://exa mple.com/") == 422);
  BOOST_TEST(url_status("https://example.com:80x/") == 422);
  BOOST_TEST(url_status("") == 422);
}

BOOST_AUTO_TEST_CASE(private_callback_hosts_are_refused_unless_allowed) {
  for (auto url : {"http://localhost/cb",
                   "http://LOCALHOST:8080/",
                   "http://localhost./",
                   "http://api.localhost/",
                   "http://127.0.0.1/",
                   "http://127.1/",
                   "http://2130706433/",
                   "http://0x7f000001/",
                   "http://10.1.2.3/",
                   "http://172.16.0.1/",
                   "http://172.31.255.255/",
                   "http://192.168.1.1/",
                   "http://169.254.169.254/latest",
                   "http://0.0.0.0/",
                   "http://[::1]/",
                   "http://[::]/",
                   "http://[fe80::1]/",
                   "http://[fd00::1]/",
                   "http://[::ffff:127.0.0.1]/",
                   "http://100.64.0.1/"}) {
    BOOST_TEST(url_status(url) == 422, url);
    BOOST_TEST(url_status(url, true) == 0, url);
  }
  // Neighbours of the private ranges are public.
  BOOST_TEST(url_status("http://172.32.0.1/") == 0);
  BOOST_TEST(url_status("http://11.0.0.1/") == 0);
  BOOST_TEST(url_status("http://localhost.example.com/") == 0);
}

BOOST_AUTO_TEST_CASE(small_bodies) {
  auto ok = [](auto c) {
    return c.ok();
  };
  auto st = [](auto c) {
    return c.ok() ? 0 : c.error.status;
  };
  BOOST_TEST(ok(parse_approve_body(parse("{}"))));
  BOOST_TEST(parse_approve_body(parse(R"({"approver_id": "alice"})")).value->approver_id ==
             "alice");
  BOOST_TEST(st(parse_approve_body(parse(R"({"approver_id": 1})"))) == 400);
  BOOST_TEST(st(parse_approve_body(parse(R"({"approver": "a"})"))) == 400);
  BOOST_TEST(st(parse_approve_body(parse("[]"))) == 400);

  BOOST_TEST(ok(parse_reason_body(parse("{}"))));
  BOOST_TEST(parse_reason_body(parse(R"({"reason": "dup"})")).value->reason == "dup");
  BOOST_TEST(st(parse_reason_body(parse(R"({"reason": false})"))) == 400);
  BOOST_TEST(st(parse_reason_body(parse(R"({"why": "x"})"))) == 400);

  BOOST_TEST(ok(parse_resume_body(parse("{}"))));
  BOOST_TEST(st(parse_resume_body(parse(R"({"x": 1})"))) == 400);
  BOOST_TEST(st(parse_resume_body(parse("1"))) == 400);

  BOOST_TEST(parse_retry_body(parse(R"({"node_key": "a"})")).value->node_key == "a");
  BOOST_TEST(st(parse_retry_body(parse("{}"))) == 400);
  BOOST_TEST(st(parse_retry_body(parse(R"({"node_key": 1})"))) == 400);
  BOOST_TEST(st(parse_retry_body(parse(R"({"node_key": "a", "x": 1})"))) == 400);
  BOOST_TEST(st(parse_retry_body(parse(R"({"node_key": ""})"))) == 422);

  BOOST_TEST(parse_complete_body(parse("{}")).value->provider_refs == "{}");
  BOOST_TEST(
      parse_complete_body(parse(R"({"provider_refs": {"tx": "0x1"}})")).value->provider_refs ==
      R"({"tx":"0x1"})");
  BOOST_TEST(st(parse_complete_body(parse(R"({"provider_refs": "x"})"))) == 400);
  BOOST_TEST(st(parse_complete_body(parse(R"({"provider_refs": {}, "y": 1})"))) == 400);
}

BOOST_AUTO_TEST_CASE(uuids_limits_and_cursors) {
  BOOST_TEST(is_uuid("123e4567-e89b-12d3-a456-426614174000"));
  BOOST_TEST(is_uuid("123E4567-E89B-12D3-A456-426614174000"));
  BOOST_TEST(!is_uuid("123e4567e89b12d3a456426614174000"));
  BOOST_TEST(!is_uuid("123e4567-e89b-12d3-a456-42661417400g"));
  BOOST_TEST(!is_uuid("not-a-uuid"));

  BOOST_TEST(*parse_limit("") == 50);
  BOOST_TEST(*parse_limit("1") == 1);
  BOOST_TEST(*parse_limit("200") == 200);
  for (auto bad : {"0", "201", "-1", "abc", "1.5", " 5", "1000000000000"})
    BOOST_TEST(!parse_limit(bad), bad);

  list_cursor c{1764533729123456, "123e4567-e89b-12d3-a456-426614174000"};
  auto text = encode_cursor(c);
  auto back = decode_cursor(text);
  BOOST_REQUIRE(back);
  BOOST_TEST(back->micros == c.micros);
  BOOST_TEST(back->id == c.id);
  for (auto bad : {"zz", "abc", "00", "313233", "", "2c"})
    BOOST_TEST(!decode_cursor(bad), bad);
  // A well-formed hex string that does not hold "<micros>,<uuid>".
  BOOST_TEST(!decode_cursor(encode_cursor({5, "x"})));
}

BOOST_AUTO_TEST_SUITE_END()
