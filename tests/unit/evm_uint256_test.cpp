// The 256-bit unsigned integer behind every EVM quantity: parsing, printing,
// byte forms and checked arithmetic at the edges of its range.
#include <boost/test/unit_test.hpp>

#include <random>

#include "domain/evm_tx.hpp"
#include "domain/uint256.hpp"

using namespace mg::domain;

namespace {

const std::string max_decimal =
    "115792089237316195423570985008687907853269984665640564039457584007913129639935";

uint256 dec(const char* text) {
  return uint256::from_decimal(text).value();
}

/// Decimal text of a 128-bit value, computed without uint256.
std::string decimal_128(unsigned __int128 v) {
  if (v == 0)
    return "0";
  std::string out;
  for (; v; v /= 10)
    out.insert(out.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(evm_uint256)

BOOST_AUTO_TEST_CASE(decimal_round_trips_including_zero_and_max) {
  BOOST_TEST(dec("0").to_decimal() == "0");
  BOOST_TEST(dec("007").to_decimal() == "7");
  BOOST_TEST(dec("18446744073709551616").to_decimal() == "18446744073709551616"); // 2^64
  BOOST_TEST(dec(max_decimal.c_str()) == uint256::max());
  BOOST_TEST(uint256::max().to_decimal() == max_decimal);
}

BOOST_AUTO_TEST_CASE(decimal_parse_refuses_garbage_and_overflow) {
  BOOST_TEST(!uint256::from_decimal(""));
  BOOST_TEST(!uint256::from_decimal("-1"));
  BOOST_TEST(!uint256::from_decimal("1.0"));
  BOOST_TEST(!uint256::from_decimal(" 1"));
  BOOST_TEST(!uint256::from_decimal("1e18"));
  // 2^256 exactly: one past the maximum.
  BOOST_TEST(!uint256::from_decimal(
      "115792089237316195423570985008687907853269984665640564039457584007913129639936"));
  BOOST_TEST(!uint256::from_decimal(max_decimal + "0"));
}

BOOST_AUTO_TEST_CASE(hex_parse_and_print_as_json_rpc_quantities) {
  BOOST_TEST(uint256::from_hex("0x0")->is_zero());
  BOOST_TEST(uint256::from_hex("0x0de0b6b3a7640000")->to_decimal() == "1000000000000000000");
  BOOST_TEST(uint256::from_hex("0XFF")->to_decimal() == "255");
  BOOST_TEST(uint256(0).to_hex() == "0x0");
  BOOST_TEST(dec("1000000000000000000").to_hex() == "0xde0b6b3a7640000");
  BOOST_TEST(*uint256::from_hex("0x" + std::string(64, 'f')) == uint256::max());
  // leading zeros beyond 64 digits are fine; a 65th significant digit is not
  BOOST_TEST(*uint256::from_hex("0x00" + std::string(64, 'f')) == uint256::max());
  BOOST_TEST(!uint256::from_hex("0x1" + std::string(64, '0')));
  BOOST_TEST(!uint256::from_hex("0x"));
  BOOST_TEST(!uint256::from_hex("ff"));
  BOOST_TEST(!uint256::from_hex("0xfg"));
}

BOOST_AUTO_TEST_CASE(big_endian_bytes_are_minimal_or_32_wide) {
  BOOST_TEST(uint256(0).to_big_endian().empty());
  BOOST_TEST(uint256(1024).to_big_endian() == std::string("\x04\x00", 2));
  BOOST_TEST(uint256(1024).to_big_endian_32().size() == 32u);
  BOOST_TEST(*uint256::from_big_endian(uint256::max().to_big_endian_32()) == uint256::max());
  BOOST_TEST(*uint256::from_big_endian(std::string("\x00\x01\x00", 3)) == uint256(256));
  BOOST_TEST(!uint256::from_big_endian(std::string(33, '\x01')));
  auto big = dec("1000000000000000000000"); // 1000 ETH in wei: above 2^64
  BOOST_TEST(mg::domain::to_0x_hex(big.to_big_endian()) == "0x3635c9adc5dea00000");
}

BOOST_AUTO_TEST_CASE(add_sub_mul_detect_overflow) {
  BOOST_TEST(checked_add(dec("18446744073709551615"), 1)->to_decimal() == "18446744073709551616");
  BOOST_TEST(!checked_add(uint256::max(), 1));
  BOOST_TEST(*checked_add(uint256::max(), 0) == uint256::max());
  BOOST_TEST(checked_sub(dec("18446744073709551616"), 1)->to_decimal() == "18446744073709551615");
  BOOST_TEST(checked_sub(5, 5)->is_zero());
  BOOST_TEST(!checked_sub(4, 5));
  BOOST_TEST(*checked_sub(uint256::max(), uint256::max()) == uint256(0));
  BOOST_TEST(checked_mul(dec("1000000000000000000"), dec("1000000000000000000"))->to_decimal() ==
             "1000000000000000000000000000000000000");
  BOOST_TEST(!checked_mul(uint256::max(), 2));
  auto two_128 = *checked_mul(dec("18446744073709551616"), dec("18446744073709551616"));
  BOOST_TEST(!checked_mul(two_128, two_128)); // 2^256
  BOOST_TEST(checked_mul(two_128, *checked_sub(two_128, 1)).has_value());
  BOOST_TEST(checked_mul(uint256::max(), 0)->is_zero());
}

BOOST_AUTO_TEST_CASE(compare_orders_by_value_across_limbs) {
  BOOST_TEST(uint256(1) < dec("18446744073709551616"));
  BOOST_TEST(dec("18446744073709551616") > uint256(~0ull));
  BOOST_TEST(uint256(7) == dec("7"));
  BOOST_TEST(uint256(7) != uint256(8));
  BOOST_TEST(uint256::max() >= uint256::max());
  BOOST_TEST(compare(uint256(0), uint256::max()) == -1);
}

BOOST_AUTO_TEST_CASE(arithmetic_agrees_with_128_bit_integers) {
  // Cross-check against the compiler's own 128-bit arithmetic on random
  // 64-bit operands (fixed seed: reproducible).
  std::mt19937_64 rng(20261130);
  for (int i = 0; i < 2000; ++i) {
    std::uint64_t a = rng() >> (rng() % 64), b = rng() >> (rng() % 64);
    using u128 = unsigned __int128;
    BOOST_TEST(checked_mul(a, b)->to_decimal() == decimal_128(static_cast<u128>(a) * b));
    BOOST_TEST(checked_add(a, b)->to_decimal() == decimal_128(static_cast<u128>(a) + b));
    if (a >= b)
      BOOST_TEST(checked_sub(a, b)->to_decimal() == decimal_128(a - b));
    // and back through text and bytes
    auto product = *checked_mul(a, b);
    BOOST_TEST(*uint256::from_decimal(product.to_decimal()) == product);
    BOOST_TEST(*uint256::from_hex(product.to_hex()) == product);
    BOOST_TEST(*uint256::from_big_endian(product.to_big_endian()) == product);
  }
}

BOOST_AUTO_TEST_CASE(fits_in_64_bits_only_when_it_does) {
  BOOST_TEST(*uint256(0).to_u64() == 0u);
  BOOST_TEST(*uint256::from_decimal("18446744073709551615")->to_u64() == 18446744073709551615u);
  BOOST_TEST(!uint256::from_decimal("18446744073709551616")->to_u64());
  BOOST_TEST(!uint256::max().to_u64());
}

BOOST_AUTO_TEST_SUITE_END()
