// Decimal amounts of the create body (is_decimal, is_positive_decimal,
// compare_decimals) against OpenSSL BIGNUM: both sides scaled to the same
// number of fractional digits and compared as integers. Also uint256's
// decimal and hex readers against BIGNUM.
#include <memory>
#include <openssl/bn.h>

#include "domain/movement_requests.hpp"
#include "domain/uint256.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mg;

namespace {

using bn_ptr = std::unique_ptr<BIGNUM, decltype(&BN_free)>;

bn_ptr bn_of_digits(const std::string& digits) {
  BIGNUM* b = nullptr;
  MG_FUZZ_CHECK(BN_dec2bn(&b, digits.empty() ? "0" : digits.c_str()) > 0, "BN_dec2bn");
  return bn_ptr(b, BN_free);
}

/// A reference grammar: digits, optionally '.' and digits, <= 78 digits in
/// all (leading zeros are a policy of the caller, so not decided here).
bool reference_decimal(std::string_view s, std::string& whole, std::string& fraction) {
  auto dot = s.find('.');
  whole = std::string(s.substr(0, dot));
  fraction = dot == std::string_view::npos ? "" : std::string(s.substr(dot + 1));
  auto digits = [](const std::string& d) {
    if (d.empty())
      return false;
    for (char c : d)
      if (c < '0' || c > '9')
        return false;
    return true;
  };
  return digits(whole) && (dot == std::string_view::npos || digits(fraction)) &&
         whole.size() + fraction.size() <= 78;
}

int sign(int v) {
  return v < 0 ? -1 : v > 0 ? 1 : 0;
}

void check_uint256(const std::string& s) {
  auto d = domain::uint256::from_decimal(s);
  bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
  if (!digits) {
    MG_FUZZ_CHECK(!d, "from_decimal refuses non-digits");
  } else {
    auto ref = bn_of_digits(s);
    MG_FUZZ_CHECK(d.has_value() == (BN_num_bits(ref.get()) <= 256), "from_decimal range");
    if (d) {
      char* text = BN_bn2dec(ref.get());
      MG_FUZZ_CHECK(d->to_decimal() == text, "to_decimal matches BIGNUM");
      OPENSSL_free(text);
      MG_FUZZ_CHECK(domain::uint256::from_hex(d->to_hex()) == d, "hex round trip");
      MG_FUZZ_CHECK(domain::uint256::from_big_endian(d->to_big_endian()) == d, "bytes round trip");
      MG_FUZZ_CHECK(d->to_big_endian_32().size() == 32, "32-byte word");
    }
  }
  if (auto h = domain::uint256::from_hex(s)) {
    MG_FUZZ_CHECK(s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'), "0x prefix");
    BIGNUM* b = nullptr;
    MG_FUZZ_CHECK(BN_hex2bn(&b, s.c_str() + 2) == int(s.size() - 2), "BN_hex2bn reads it all");
    bn_ptr ref(b, BN_free);
    char* text = BN_bn2dec(ref.get());
    MG_FUZZ_CHECK(h->to_decimal() == text, "from_hex matches BIGNUM");
    OPENSSL_free(text);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto f = fuzz::split(fuzz::bytes(data, size), ' ', 2);
  const std::string &a = f[0], &b = f[1];
  check_uint256(a);

  std::string aw, af, bw, bf;
  bool a_ok = reference_decimal(a, aw, af);
  MG_FUZZ_CHECK(!domain::is_decimal(a) || a_ok, "is_decimal accepts only the grammar");
  if (!domain::is_decimal(a))
    return 0;
  auto a_bn = bn_of_digits(aw + af);
  MG_FUZZ_CHECK(domain::is_positive_decimal(a) == !BN_is_zero(a_bn.get()), "positive iff not zero");
  MG_FUZZ_CHECK(domain::compare_decimals(a, a) == 0, "compare is reflexive");
  if (!domain::is_decimal(b))
    return 0;
  MG_FUZZ_CHECK(reference_decimal(b, bw, bf), "is_decimal accepts only the grammar");
  // Scale both to the longer fraction and compare the integers.
  size_t scale = std::max(af.size(), bf.size());
  auto x = bn_of_digits(aw + af + std::string(scale - af.size(), '0'));
  auto y = bn_of_digits(bw + bf + std::string(scale - bf.size(), '0'));
  int expected = sign(BN_cmp(x.get(), y.get()));
  MG_FUZZ_CHECK(sign(domain::compare_decimals(a, b)) == expected,
                "compare_decimals matches BIGNUM");
  MG_FUZZ_CHECK(sign(domain::compare_decimals(b, a)) == -expected, "compare is antisymmetric");
  return 0;
}
