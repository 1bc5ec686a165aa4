// Decimal token amounts ↔ base units: exact both ways, refused rather than
// rounded or wrapped.
#include <boost/test/unit_test.hpp>

#include "domain/evm_amount.hpp"

using namespace mg::domain;

namespace {

std::string units(const char* amount, int decimals) {
  auto r = to_base_units(amount, decimals);
  BOOST_TEST_REQUIRE(r.value.has_value(), amount << ": " << r.error);
  return r.value->to_decimal();
}

bool refused(const char* amount, int decimals) {
  auto r = to_base_units(amount, decimals);
  return !r.value && !r.error.empty();
}

} // namespace

BOOST_AUTO_TEST_SUITE(evm_amount)

BOOST_AUTO_TEST_CASE(decimal_amounts_convert_exactly_to_base_units) {
  BOOST_TEST(units("1.5", 18) == "1500000000000000000");
  BOOST_TEST(units("1", 18) == "1000000000000000000");
  BOOST_TEST(units("0.000000000000000001", 18) == "1");
  BOOST_TEST(units("1000", 18) == "1000000000000000000000"); // above 2^64
  BOOST_TEST(units("123.456789", 6) == "123456789");
  BOOST_TEST(units("42", 0) == "42");
  // a value no double can hold exactly survives unchanged
  BOOST_TEST(units("9007199254740993.000000000000000001", 18) ==
             "9007199254740993000000000000000001");
}

BOOST_AUTO_TEST_CASE(zero_and_the_largest_representable_amount) {
  BOOST_TEST(units("0", 18) == "0");
  BOOST_TEST(units("0.0", 18) == "0");
  BOOST_TEST(
      units("115792089237316195423570985008687907853269984665640564039457.584007913129639935",
            18) ==
      "115792089237316195423570985008687907853269984665640564039457584007913129639935");
}

BOOST_AUTO_TEST_CASE(more_fractional_digits_than_the_token_has_are_refused) {
  BOOST_TEST(refused("0.0000000000000000001", 18));
  BOOST_TEST(refused("1.1234567", 6));
  BOOST_TEST(refused("1.0", 0)); // even a zero: never silently dropped
  auto r = to_base_units("1.1234567", 6);
  BOOST_TEST(r.error.find("7 fractional digits") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(amounts_beyond_2_256_are_refused) {
  BOOST_TEST(refused(
      "115792089237316195423570985008687907853269984665640564039457.584007913129639936", 18));
  std::string ten_to_78 = "1" + std::string(78, '0');
  BOOST_TEST(refused(ten_to_78.c_str(), 0));
  BOOST_TEST(refused("1", 78)); // 10^78 > 2^256: no such token
}

BOOST_AUTO_TEST_CASE(malformed_amounts_are_refused) {
  for (const char* bad :
       {"", ".5", "5.", "-1", "+1", "1e18", " 1", "1 ", "1,5", "0x10", "1.2.3", "NaN", "inf"})
    BOOST_TEST(refused(bad, 18), "'" << bad << "'");
  BOOST_TEST(refused("1", -1));
}

BOOST_AUTO_TEST_CASE(base_units_print_back_without_trailing_zeros) {
  auto u = [](const char* d) {
    return uint256::from_decimal(d).value();
  };
  BOOST_TEST(from_base_units(u("1500000000000000000"), 18) == "1.5");
  BOOST_TEST(from_base_units(u("1000000000000000000"), 18) == "1");
  BOOST_TEST(from_base_units(u("1"), 18) == "0.000000000000000001");
  BOOST_TEST(from_base_units(u("0"), 18) == "0");
  BOOST_TEST(from_base_units(u("0"), 0) == "0");
  BOOST_TEST(from_base_units(u("1230"), 0) == "1230");
  BOOST_TEST(from_base_units(u("123456789"), 6) == "123.456789");
  BOOST_TEST(from_base_units(uint256::max(), 18) ==
             "115792089237316195423570985008687907853269984665640564039457.584007913129639935");
  // round trip
  for (const char* a : {"0.1", "1000", "3.14159", "0.000001"})
    BOOST_TEST(from_base_units(*to_base_units(a, 18).value, 18) == a);
}

BOOST_AUTO_TEST_SUITE_END()
