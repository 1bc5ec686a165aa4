// Token amounts ↔ base units (domain/evm_amount) against OpenSSL BIGNUM:
// to_base_units(amount, decimals) is amount·10^decimals exactly, refused
// exactly when the grammar fails, the fraction is longer than `decimals`
// or the value exceeds 2^256 − 1; from_base_units inverts it.
#include <memory>
#include <openssl/bn.h>

#include "domain/evm_amount.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mg;

namespace {

using bn_ptr = std::unique_ptr<BIGNUM, decltype(&BN_free)>;

std::string dec(const BIGNUM* b) {
  char* t = BN_bn2dec(b);
  std::string out(t);
  OPENSSL_free(t);
  return out;
}

/// The amount without trailing fractional zeros and a dangling point, and
/// with the whole part's leading zeros gone: what from_base_units prints.
std::string normalised(std::string whole, std::string fraction) {
  while (!fraction.empty() && fraction.back() == '0')
    fraction.pop_back();
  size_t nz = whole.find_first_not_of('0');
  whole = nz == std::string::npos ? "0" : whole.substr(nz);
  return fraction.empty() ? whole : whole + "." + fraction;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1)
    return 0;
  const int decimals = data[0] % (domain::max_token_decimals + 2); // one beyond the max
  const std::string amount(fuzz::bytes(data + 1, size - 1));

  auto r = domain::to_base_units(amount, decimals);
  MG_FUZZ_CHECK(r.value.has_value() == r.error.empty(), "a value or a reason");

  auto dot = amount.find('.');
  std::string whole = amount.substr(0, dot);
  std::string fraction = dot == std::string::npos ? "" : amount.substr(dot + 1);
  auto digits = [](const std::string& d) {
    return !d.empty() && d.find_first_not_of("0123456789") == std::string::npos;
  };
  bool grammar = digits(whole) && (dot == std::string::npos || digits(fraction));
  if (!grammar || decimals > domain::max_token_decimals || fraction.size() > size_t(decimals)) {
    MG_FUZZ_CHECK(!r.value, "refused: grammar, decimals or too many fractional digits");
    return 0;
  }
  // Whole parts this long are far above 2^256 anyway; keep BIGNUM cheap.
  BIGNUM* b = nullptr;
  std::string scaled = whole + fraction + std::string(decimals - fraction.size(), '0');
  MG_FUZZ_CHECK(BN_dec2bn(&b, scaled.c_str()) > 0, "BN_dec2bn");
  bn_ptr ref(b, BN_free);
  bool fits = BN_num_bits(ref.get()) <= 256;
  MG_FUZZ_CHECK(r.value.has_value() == fits, "refused exactly above 2^256 - 1");
  if (!r.value)
    return 0;
  MG_FUZZ_CHECK(r.value->to_decimal() == dec(ref.get()), "base units match BIGNUM");
  MG_FUZZ_CHECK(domain::from_base_units(*r.value, decimals) == normalised(whole, fraction),
                "from_base_units inverts to_base_units");
  auto back = domain::to_base_units(domain::from_base_units(*r.value, decimals), decimals);
  MG_FUZZ_CHECK(back.value == r.value, "round trip through text");
  return 0;
}
