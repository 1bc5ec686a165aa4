// The JSON writer and the bodies built with it: exact numbers, null for
// what JSON cannot hold, and byte-for-byte the shapes the string
// concatenation they replaced produced (key order, types, no whitespace).
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <limits>

#include "domain/json.hpp"
#include "domain/json_writer.hpp"
#include "domain/step_proof.hpp"
#include "domain/utf8.hpp"
#include "persistence/keyset_page.hpp"

namespace json = mg::json;
namespace domain = mg::domain;

namespace {

const std::string hostile = "q\" b\\ nl\n ctl\x01 bad\xff\xfe sur\xed\xa0\x80 end";

/// Valid UTF-8 JSON that the strict reader accepts.
bool valid(const std::string& text) {
  return domain::is_valid_utf8(text) && json::read(text).has_value();
}

} // namespace

BOOST_AUTO_TEST_SUITE(json_writer)

BOOST_AUTO_TEST_CASE(numbers_are_written_exactly_for_every_integer_type) {
  const auto text = json::writer()
                        .begin_object()
                        .member("int", -7)
                        .member("min", std::numeric_limits<std::int64_t>::min())
                        .member("max", std::numeric_limits<std::uint64_t>::max())
                        .member("size", std::size_t{3})
                        .member("unsigned", 4u)
                        .member("long_long", 5LL)
                        .member("yes", true)
                        .end_object()
                        .str();
  BOOST_TEST(text == R"({"int":-7,"min":-9223372036854775808,"max":18446744073709551615,)"
                     R"("size":3,"unsigned":4,"long_long":5,"yes":true})");
}

BOOST_AUTO_TEST_CASE(doubles_round_trip_and_non_finite_become_null) {
  const auto text = json::writer()
                        .begin_array()
                        .number(2.5)
                        .number(0.1)
                        .number(3.0)
                        .number(std::nan(""))
                        .number(std::numeric_limits<double>::infinity())
                        .end_array()
                        .str();
  BOOST_TEST(text == "[2.5,0.10000000000000001,3,null,null]");
  auto doc = json::read(text);
  BOOST_REQUIRE(doc.has_value());
  BOOST_TEST(doc->doc[1].GetDouble() == 0.1);
}

BOOST_AUTO_TEST_CASE(member_or_null_writes_null_for_empty) {
  BOOST_TEST(json::writer()
                 .begin_object()
                 .member_or_null("a", "")
                 .member_or_null("b", "x")
                 .end_object()
                 .str() == R"({"a":null,"b":"x"})");
}

BOOST_AUTO_TEST_CASE(step_proof_keeps_its_shape) {
  domain::step_result r;
  r.next_state = domain::node_state::completed;
  r.provider_state = "done";
  r.provider_refs = R"({"tx":"0xab"})";
  r.provider_ref_id = "ref-1";
  r.retry_after_seconds = 1.5;
  BOOST_TEST(mg::domain::step_proof_json(r) ==
             R"({"next_state":"COMPLETED","provider_state":"done","provider_refs":{"tx":"0xab"},)"
             R"("provider_ref_id":"ref-1","retry_after_seconds":1.5,"error_code":"",)"
             R"("error_detail":""})");
  domain::step_result empty;
  empty.provider_refs.clear();
  empty.retry_after_seconds = std::numeric_limits<double>::infinity();
  BOOST_TEST(mg::domain::recover_proof_json(domain::recover_outcome::fenced,
                                            domain::node_state::failed, empty) ==
             R"({"outcome":"fenced","next_state":"FAILED","provider_state":"","provider_refs":{},)"
             R"("provider_ref_id":"","retry_after_seconds":null,"error_code":"",)"
             R"("error_detail":""})");
}

BOOST_AUTO_TEST_CASE(step_proof_records_when_the_engine_got_the_answer) {
  using namespace std::chrono;
  domain::step_result r;
  r.next_state = domain::node_state::submitted;
  r.answered_at = system_clock::time_point(seconds(1796439845) + microseconds(7));
  auto doc = json::read(mg::domain::step_proof_json(r));
  BOOST_REQUIRE(doc.has_value());
  BOOST_TEST(json::get_string(doc->doc, "answered_at") == "2026-12-05T03:04:05.000007Z");
  BOOST_TEST(mg::domain::utc_timestamp_text(system_clock::time_point(milliseconds(-1))) ==
             "1969-12-31T23:59:59.999000Z");
}

BOOST_AUTO_TEST_CASE(step_proof_of_hostile_provider_text_is_valid_json) {
  domain::step_result r;
  r.provider_state = hostile;
  r.provider_ref_id = hostile;
  r.error_code = hostile;
  r.error_detail = hostile;
  const auto text = mg::domain::step_proof_json(r);
  BOOST_TEST(valid(text), text);
  auto doc = json::read(text);
  BOOST_REQUIRE(doc.has_value());
  BOOST_TEST(doc->doc.MemberCount() == 7u); // nothing injected
  BOOST_TEST(json::get_string(doc->doc, "next_state") == "");
}

BOOST_AUTO_TEST_CASE(page_body_keeps_its_shape) {
  mg::db::json_page page;
  page.items = R"([{"id":"a"}])";
  BOOST_TEST(mg::db::page_body(page) == R"({"items":[{"id":"a"}],"next_cursor":null})");
  page.next = domain::list_cursor{42, "b"};
  auto doc = json::read(mg::db::page_body(page));
  BOOST_REQUIRE(doc.has_value());
  BOOST_TEST(json::get_string(doc->doc, "next_cursor") == domain::encode_cursor(*page.next));
}

BOOST_AUTO_TEST_SUITE_END()
