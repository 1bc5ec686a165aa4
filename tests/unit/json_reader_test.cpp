// The hostile-input JSON reader (SPEC §5): what it refuses, and that its own
// serialisation keeps numbers exactly as sent.
#include <boost/test/unit_test.hpp>
#include <string>

#include "domain/json.hpp"
#include "domain/json_reader.hpp"
#include "domain/json_writer.hpp"
#include "domain/utf8.hpp"

using namespace mg;

namespace {

bool refused(const std::string& text) {
  std::string why;
  bool bad = !json::read(text, &why).has_value();
  BOOST_TEST_MESSAGE(text.substr(0, 60) << " → " << why);
  return bad;
}

std::string nested(int depth, const std::string& inner = "1") {
  return std::string(depth, '[') + inner + std::string(depth, ']');
}

} // namespace

BOOST_AUTO_TEST_SUITE(json_reader)

BOOST_AUTO_TEST_CASE(refuses_a_member_name_twice_at_any_depth) {
  BOOST_TEST(refused(R"({"amount": "1", "amount": "9000000"})"));
  BOOST_TEST(refused(R"({"intent": {"amount": "1", "amount": "9000000"}})"));
  BOOST_TEST(refused(R"({"a": [{"b": {"c": 1, "c": 2}}]})"));
  BOOST_TEST(refused(R"({"intent": {}, "intent": {}})"));
  // Escaped and literal spellings of the same name are the same name.
  BOOST_TEST(refused(R"({"a": 1, "\u0061": 2})"));
  // The same name in sibling or nested objects is fine.
  BOOST_TEST(!refused(R"({"a": {"a": 1}, "b": {"a": 2}, "c": [{"a": 1}, {"a": 2}]})"));
}

BOOST_AUTO_TEST_CASE(depth_64_is_read_and_65_refused) {
  BOOST_TEST(!refused(nested(64)));
  BOOST_TEST(refused(nested(65)));
  std::string objects;
  for (int i = 0; i < 64; ++i)
    objects += "{\"k\":";
  BOOST_TEST(!refused(objects + "1" + std::string(64, '}')));
  BOOST_TEST(refused("[" + objects + "1" + std::string(64, '}') + "]"));
}

BOOST_AUTO_TEST_CASE(a_deep_document_is_refused_without_recursing) {
  // 500 000 levels would overflow a recursive parser's stack.
  BOOST_TEST(refused(std::string(500000, '[')));
  BOOST_TEST(refused(nested(500000)));
  std::string objects;
  for (int i = 0; i < 200000; ++i)
    objects += "{\"k\":";
  BOOST_TEST(refused(objects));
}

BOOST_AUTO_TEST_CASE(refuses_nul_lone_surrogates_and_invalid_utf8) {
  BOOST_TEST(refused(R"({"a": "x\u0000y"})"));
  BOOST_TEST(refused(R"({"a\u0000": 1})"));
  BOOST_TEST(refused(R"({"a": "\udc00"})"));
  BOOST_TEST(refused(R"({"a": "\ud800"})"));
  BOOST_TEST(refused(R"({"a": "\ud800x"})"));
  BOOST_TEST(refused(R"({"\udfff": 1})"));
  BOOST_TEST(refused("{\"a\": \"\xff\"}"));
  BOOST_TEST(refused("{\"\xc0\xaf\": 1}"));             // overlong '/'
  BOOST_TEST(refused("{\"a\": \"\xed\xa0\x80\"}"));     // encoded surrogate
  BOOST_TEST(refused("{\"a\": \"\xf4\x90\x80\x80\"}")); // above U+10FFFF
  BOOST_TEST(refused(std::string("{\"a\": \"x\0\"}", 10)));
  BOOST_TEST(refused(std::string("{}\0 trailing", 12)));
  // A surrogate pair, and raw multi-byte UTF-8, are fine.
  auto ok = json::read(R"({"a": "\ud83d\ude00", "b": "é€😀"})");
  BOOST_REQUIRE(ok);
  BOOST_TEST(ok->doc["a"].GetString() == std::string("\xF0\x9F\x98\x80"));
}

BOOST_AUTO_TEST_CASE(numbers_are_written_back_as_sent) {
  const std::string big = "10000000000000000000000000000000000000000"; // 10^40
  const std::string text =
      R"({"a":)" + big +
      R"(,"f":0.100000000000000000000001,"e":1E+2,"n":-0,"i":-42,"u":18446744073709551615})";
  auto r = json::read(text);
  BOOST_REQUIRE(r);
  BOOST_TEST(r->text == text);
  BOOST_TEST(r->members.at("a") == big);
  BOOST_TEST(r->members.at("f") == "0.100000000000000000000001");
  // The document holds them as numbers of the usual kinds.
  BOOST_TEST(r->doc["i"].IsInt());
  BOOST_TEST(r->doc["i"].GetInt() == -42);
  BOOST_TEST(r->doc["u"].IsUint64());
  BOOST_TEST(r->doc["a"].IsDouble());
  BOOST_TEST(r->doc["e"].GetDouble() == 100.0);
  BOOST_TEST(refused("[1e400]"));
}

BOOST_AUTO_TEST_CASE(members_are_the_serialisation_of_each_root_value) {
  auto r = json::read(R"( { "intent" : { "amount" : "1.5", "x" : [ 1 , 2.50 ] } , "" : null,
                          "s": "a\"b\n", "o": {} } )");
  BOOST_REQUIRE(r);
  BOOST_TEST(r->members.at("intent") == R"({"amount":"1.5","x":[1,2.50]})");
  BOOST_TEST(r->members.at("") == "null");
  BOOST_TEST(r->members.at("s") == R"("a\"b\n")");
  BOOST_TEST(r->members.at("o") == "{}");
  BOOST_TEST(r->members.size() == 4u);
  // Its text reads back to itself.
  auto again = json::read(r->text);
  BOOST_REQUIRE(again);
  BOOST_TEST(again->text == r->text);
  BOOST_TEST(json::read("[1,{\"a\":2}]")->members.empty());
}

BOOST_AUTO_TEST_CASE(refuses_what_is_not_one_json_value) {
  for (const char* bad : {"", " ", "{", "{}{}", "[1,]", "{\"a\":1,}", "01", "NaN", "'a'", "[1] x"})
    BOOST_TEST(refused(bad), bad);
}

BOOST_AUTO_TEST_CASE(parse_uses_the_reader_and_dump_does_not_recurse) {
  BOOST_TEST(!json::parse(R"({"a":1,"a":2})"));
  // A deep value built in code (no reader limit) still dumps.
  json::document d;
  d.SetArray();
  json::value* at = &d;
  for (int i = 0; i < 200000; ++i) {
    at->PushBack(json::value(rapidjson::kArrayType), d.GetAllocator());
    at = &(*at)[0];
  }
  const auto text = json::dump(d);
  BOOST_TEST(text.size() == 400002u);
  BOOST_TEST(json::canonical(d) == text);
  BOOST_TEST(json::canonical(*json::parse(R"({"b":[{"z":1,"y":2}],"a":null})")) ==
             R"({"a":null,"b":[{"y":2,"z":1}]})");
}

BOOST_AUTO_TEST_CASE(trusted_parse_allows_deeper_columns_but_stays_bounded) {
  BOOST_CHECK_NO_THROW(json::parse_trusted(nested(200), "column"));
  BOOST_CHECK_THROW(json::parse_trusted(nested(300), "column"), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(writer_and_quote_always_give_valid_utf8) {
  const std::string hostile = "bad \xff\xfe byte \xed\xa0\x80 and \x01";
  const auto q = json::quote(hostile);
  BOOST_TEST(domain::is_valid_utf8(q));
  BOOST_TEST(json::read("[" + q + "]").has_value());
  json::writer w;
  w.begin_object().member("message", hostile).key(hostile).number(3).end_object();
  BOOST_TEST(json::read(w.str()).has_value(), w.str());
  BOOST_TEST(domain::to_valid_utf8("ok é") == "ok é");
}

BOOST_AUTO_TEST_SUITE_END()
