// The request-authentication parsers of SPEC §5: X-QTG-Timestamp, the
// nonce, scope names, and the canonical request. Invariants: the timestamp
// parser agrees with a reference reading (strtoll on the SPEC grammar) and
// its value prints back to the text (without leading zeros); valid_nonce is
// exactly the SPEC grammar; the signature is lower-case hex of 64 digits and
// changes with the nonce.
#include <cerrno>
#include <cstdlib>

#include "domain/api_auth.hpp"
#include "domain/request_timestamp.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mg;

namespace {

bool spec_timestamp(std::string_view s) {
  std::string_view d = !s.empty() && s[0] == '-' ? s.substr(1) : s;
  if (d.empty() || d.size() > 18)
    return false;
  for (char c : d)
    if (c < '0' || c > '9')
      return false;
  return true;
}

bool spec_nonce(std::string_view s) {
  if (s.size() < 16 || s.size() > 128)
    return false;
  for (unsigned char c : s)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-'))
      return false;
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto f = fuzz::split(fuzz::bytes(data, size), '\n', 3);
  const std::string& timestamp = f[0];
  const std::string& nonce = f[1];

  auto ts = api::parse_request_timestamp(timestamp);
  MG_FUZZ_CHECK(ts.has_value() == spec_timestamp(timestamp), "timestamp grammar");
  if (ts) {
    errno = 0;
    char* end = nullptr;
    long long ref = std::strtoll(timestamp.c_str(), &end, 10);
    MG_FUZZ_CHECK(errno == 0 && *end == '\0' && ref == *ts, "timestamp value");
    auto digits = timestamp[0] == '-' ? timestamp.substr(1) : timestamp;
    auto stripped = digits.substr(std::min(digits.find_first_not_of('0'), digits.size() - 1));
    MG_FUZZ_CHECK(std::to_string(*ts < 0 ? -*ts : *ts) == stripped, "timestamp prints back");
  }

  MG_FUZZ_CHECK(api::valid_nonce(nonce) == spec_nonce(nonce), "nonce grammar");

  if (auto s = api::parse_scope(f[2]))
    MG_FUZZ_CHECK(api::to_string(*s) == f[2], "scope names round-trip");

  const std::string sig =
      api::sign_request("0123456789abcdef", "POST", "/v3/movements", f[2], f[2], timestamp, nonce);
  MG_FUZZ_CHECK(sig.size() == 64 && fuzz::is_lower_hex(sig), "signature is 64 lower-case hex");
  MG_FUZZ_CHECK(sig != api::sign_request("0123456789abcdef", "POST", "/v3/movements", f[2], f[2],
                                         timestamp, nonce + "x"),
                "the nonce is signed");
  MG_FUZZ_CHECK(api::constant_time_equal(timestamp, nonce) == (timestamp == nonce),
                "constant_time_equal is equality");
  return 0;
}
