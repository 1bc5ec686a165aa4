// RLP: the examples of the Ethereum RLP specification, plus the length
// boundaries (55/56 bytes) where the prefix form changes.
#include <boost/test/unit_test.hpp>

#include "domain/evm_tx.hpp"
#include "domain/rlp.hpp"

using namespace mg::domain;

namespace {

std::string hex(const std::string& bytes) {
  return to_0x_hex(bytes);
}

} // namespace

BOOST_AUTO_TEST_SUITE(evm_rlp)

BOOST_AUTO_TEST_CASE(strings_from_the_spec) {
  BOOST_TEST(hex(rlp::encode_bytes("dog")) == "0x83646f67");
  BOOST_TEST(hex(rlp::encode_bytes("")) == "0x80");
  BOOST_TEST(hex(rlp::encode_bytes(std::string("\x00", 1))) == "0x00"); // the byte 0x00
  BOOST_TEST(hex(rlp::encode_bytes("\x0f")) == "0x0f");
  BOOST_TEST(hex(rlp::encode_bytes("\x7f")) == "0x7f");
  BOOST_TEST(hex(rlp::encode_bytes("\x80")) == "0x8180"); // >= 0x80 needs a prefix
}

BOOST_AUTO_TEST_CASE(integers_from_the_spec) {
  BOOST_TEST(hex(rlp::encode_uint(0)) == "0x80");
  BOOST_TEST(hex(rlp::encode_uint(15)) == "0x0f");
  BOOST_TEST(hex(rlp::encode_uint(1024)) == "0x820400");
  BOOST_TEST(hex(rlp::encode_uint(127)) == "0x7f");
  BOOST_TEST(hex(rlp::encode_uint(128)) == "0x8180");
  BOOST_TEST(hex(rlp::encode_uint(uint256::max())) == "0xa0" + std::string(64, 'f'));
}

BOOST_AUTO_TEST_CASE(lists_from_the_spec) {
  BOOST_TEST(hex(rlp::encode_list({rlp::encode_bytes("cat"), rlp::encode_bytes("dog")})) ==
             "0xc88363617483646f67");
  BOOST_TEST(hex(rlp::encode_list({})) == "0xc0");
  // The set theoretical representation of three: [ [], [[]], [ [], [[]] ] ].
  auto empty = rlp::encode_list({});
  auto one = rlp::encode_list({empty});
  auto two = rlp::encode_list({empty, one});
  BOOST_TEST(hex(rlp::encode_list({empty, one, two})) == "0xc7c0c1c0c3c0c1c0");
}

BOOST_AUTO_TEST_CASE(a_56_byte_string_takes_the_long_form) {
  std::string lorem = "Lorem ipsum dolor sit amet, consectetur adipisicing elit";
  BOOST_TEST_REQUIRE(lorem.size() == 56u);
  BOOST_TEST(hex(rlp::encode_bytes(lorem)) == "0xb838" + hex(lorem).substr(2));
  std::string fifty_five(55, 'a');
  BOOST_TEST(hex(rlp::encode_bytes(fifty_five)).substr(0, 4) == "0xb7");
  // 1024 bytes: length-of-length 2
  BOOST_TEST(hex(rlp::encode_bytes(std::string(1024, 'x'))).substr(0, 8) == "0xb90400");
}

BOOST_AUTO_TEST_CASE(a_list_over_55_bytes_takes_the_long_form) {
  std::string lorem = "Lorem ipsum dolor sit amet, consectetur adipisicing elit";
  auto list = rlp::encode_list({rlp::encode_bytes(lorem)}); // payload 58 bytes
  BOOST_TEST(hex(list).substr(0, 10) == "0xf83ab838");
  BOOST_TEST(list.size() == 60u);
  // payload of exactly 55 bytes stays short: 0xc0 + 55 = 0xf7
  auto short_list = rlp::encode_list({rlp::encode_bytes(std::string(54, 'a'))});
  BOOST_TEST(hex(short_list).substr(0, 6) == "0xf7b6");
}

BOOST_AUTO_TEST_CASE(decoding_inverts_encoding) {
  std::vector<std::string> items = {rlp::encode_uint(0), rlp::encode_uint(1024),
                                    rlp::encode_bytes(std::string(60, 'x')), rlp::encode_list({}),
                                    rlp::encode_bytes("\x7f")};
  auto decoded = rlp::decode_list(rlp::encode_list(items));
  BOOST_REQUIRE(decoded);
  BOOST_REQUIRE(decoded->size() == 5u);
  BOOST_TEST(*rlp::decode_uint((*decoded)[0]) == uint256(0));
  BOOST_TEST(*rlp::decode_uint((*decoded)[1]) == uint256(1024));
  BOOST_TEST((*decoded)[2].payload == std::string(60, 'x'));
  BOOST_TEST((*decoded)[3].is_list);
  BOOST_TEST((*decoded)[4].payload == "\x7f");
}

BOOST_AUTO_TEST_CASE(decoding_refuses_non_canonical_and_truncated_input) {
  using namespace std::string_literals;
  const std::string refused[] = {
      ""s,
      "\x80"s,             // a string, not a list
      "\xc2\x81\x05"s,     // single byte < 0x80 wrapped in a prefix
      "\xc1\x80\x00"s,     // trailing byte after the list
      "\xc3\x82\x01"s,     // truncated item
      "\xf8\x02\x80\x80"s, // long form for a short list
      "\xc3\x82\x00\x01"s, // fine as bytes, but see decode_uint below
  };
  for (size_t i = 0; i + 1 < std::size(refused); ++i)
    BOOST_TEST(!rlp::decode_list(refused[i]), "case " << i);
  auto leading_zero = rlp::decode_list(refused[6]);
  BOOST_REQUIRE(leading_zero);
  BOOST_TEST(!rlp::decode_uint((*leading_zero)[0])); // integers have no leading zeros
}

// Found by tests/fuzz/rlp_fuzz: a list nested in the outer one is RLP too,
// at any depth, and must be canonical like the rest.
BOOST_AUTO_TEST_CASE(decoding_refuses_a_malformed_nested_list) {
  using namespace std::string_literals;
  BOOST_TEST(!rlp::decode_list("\xc7\xc1\xc3\xc0\xc1\xc0\xc0\xc0"s)); // c1 holds a truncated c3
  BOOST_TEST(!rlp::decode_list("\xc4\xc3\xc2\x81\x05"s)); // wrapped single byte, depth 2
  BOOST_TEST(!rlp::decode_list("\xc3\xc2\xc1\xc2"s));     // truncated at depth 3
  auto ok = rlp::decode_list("\xc4\xc3\xc2\xc1\xc0"s);
  BOOST_REQUIRE(ok);
  BOOST_TEST(ok->size() == 1u);
  // Deep nesting is walked without recursion; a fault at the bottom is found.
  std::string deep = "\xc0"s;
  for (int i = 0; i < 5000; ++i)
    deep = rlp::encode_list({deep});
  BOOST_TEST(rlp::decode_list(deep).has_value());
  deep.back() = '\xc1';
  BOOST_TEST(!rlp::decode_list(deep));
}

BOOST_AUTO_TEST_SUITE_END()
