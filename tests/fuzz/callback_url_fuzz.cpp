// Callback URL checks at create (callback_url_problem) and the split the
// dispatcher delivers with (split_url). Invariants: what the strict check
// accepts the permissive one accepts too; an accepted URL has no space or
// control byte and can be split for delivery; when the origin the client
// connects to is a plain IPv4 literal, a strict accept means a public
// address (reference list of SPEC §5's private ranges).
#include <arpa/inet.h>

#include "domain/movement_requests.hpp"
#include "domain/url.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mg;

namespace {

bool reference_private_v4(uint32_t ip) {
  auto in = [&](uint32_t net, int bits) {
    return (ip >> (32 - bits)) == (net >> (32 - bits));
  };
  return in(0x00000000, 8) || in(0x0a000000, 8) || in(0x7f000000, 8) || in(0xa9fe0000, 16) ||
         in(0xac100000, 12) || in(0xc0a80000, 16) || in(0x64400000, 10);
}

/// The host of `scheme://host[:port]` when the origin is exactly that
/// (no userinfo, no brackets); "" otherwise.
std::string plain_origin_host(const std::string& origin) {
  auto sep = origin.find("://");
  std::string rest = origin.substr(sep + 3);
  if (rest.find_first_of("@[]") != std::string::npos)
    return "";
  auto colon = rest.find(':');
  std::string host = rest.substr(0, colon);
  if (colon != std::string::npos &&
      (colon + 1 == rest.size() ||
       rest.find_first_not_of("0123456789", colon + 1) != std::string::npos))
    return "";
  return host;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string url(fuzz::bytes(data, size));
  const std::string strict = domain::callback_url_problem(url, false);
  const std::string permissive = domain::callback_url_problem(url, true);
  if (strict.empty())
    MG_FUZZ_CHECK(permissive.empty(), "strict accept implies permissive accept");
  if (!permissive.empty())
    return 0;
  for (unsigned char c : url)
    MG_FUZZ_CHECK(c > 0x20 && c != 0x7f, "no space or control byte in an accepted URL");
  auto parts = domain::split_url(url);
  MG_FUZZ_CHECK(parts.has_value(), "an accepted URL can be delivered to");
  MG_FUZZ_CHECK(!parts->target.empty() && parts->target[0] == '/', "target starts with '/'");
  MG_FUZZ_CHECK(parts->target.find('#') == std::string::npos, "fragment dropped");
  MG_FUZZ_CHECK(parts->origin.rfind("http://", 0) == 0 || parts->origin.rfind("https://", 0) == 0,
                "origin scheme is lower-case http or https");
  if (!strict.empty())
    return 0;
  std::string host = plain_origin_host(parts->origin);
  in_addr v4;
  if (!host.empty() && inet_pton(AF_INET, host.c_str(), &v4) == 1)
    MG_FUZZ_CHECK(!reference_private_v4(ntohl(v4.s_addr)),
                  "strict accept connects to a public IPv4");
  return 0;
}
