// SPEC §5's sorted_query and the query the handler sees. Invariants:
// canonical_query is idempotent and independent of the pieces' order; the
// canonical string determines the decoded pairs the handler gets
// (decode_query of the canonical form is the same multiset as of the raw
// query), so no two queries that sign alike are served differently;
// percent_decode(percent_encode(x)) == x and the encoding uses only
// unreserved characters and upper-case %XX.
#include <algorithm>

#include "domain/api_auth.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mg;

namespace {

using pairs = std::vector<std::pair<std::string, std::string>>;

pairs sorted(pairs p) {
  std::sort(p.begin(), p.end());
  return p;
}

bool unreserved_or_escape(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = s[i];
    bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '.' || c == '_' || c == '~';
    if (plain)
      continue;
    if (c != '%' || i + 2 >= s.size())
      return false;
    auto upper_hex = [](char h) {
      return (h >= '0' && h <= '9') || (h >= 'A' && h <= 'F');
    };
    if (!upper_hex(s[i + 1]) || !upper_hex(s[i + 2]))
      return false;
    i += 2;
  }
  return true;
}

/// The raw query's '&'-pieces in reverse order.
std::string reversed(std::string_view raw) {
  std::vector<std::string_view> pieces;
  size_t start = 0;
  while (true) {
    auto end = raw.find('&', start);
    pieces.push_back(raw.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos)
      break;
    start = end + 1;
  }
  std::string out;
  for (auto it = pieces.rbegin(); it != pieces.rend(); ++it)
    out.append(it == pieces.rbegin() ? "" : "&").append(*it);
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string raw(fuzz::bytes(data, size));

  const std::string canon = api::canonical_query(raw);
  MG_FUZZ_CHECK(api::canonical_query(canon) == canon, "canonical_query is idempotent");
  MG_FUZZ_CHECK(api::canonical_query(reversed(raw)) == canon, "order of pieces does not matter");

  const pairs seen = api::decode_query(raw);
  MG_FUZZ_CHECK(sorted(api::decode_query(canon)) == sorted(seen),
                "the signed form decodes to what the handler sees");
  // Every piece of the canonical form is k=v with k and v encoded.
  if (!canon.empty()) {
    size_t start = 0;
    while (start <= canon.size()) {
      auto end = canon.find('&', start);
      if (end == std::string::npos)
        end = canon.size();
      std::string_view piece = std::string_view(canon).substr(start, end - start);
      auto eq = piece.find('=');
      MG_FUZZ_CHECK(eq != std::string_view::npos, "canonical piece has '='");
      MG_FUZZ_CHECK(unreserved_or_escape(piece.substr(0, eq)) &&
                        unreserved_or_escape(piece.substr(eq + 1)),
                    "canonical piece is encoded");
      start = end + 1;
    }
  }

  const std::string enc = api::percent_encode(raw);
  MG_FUZZ_CHECK(unreserved_or_escape(enc), "percent_encode output is unreserved or %XX");
  MG_FUZZ_CHECK(api::percent_decode(enc) == raw, "decode(encode(x)) == x");
  const std::string dec = api::percent_decode(raw);
  MG_FUZZ_CHECK(dec.size() <= raw.size(), "decoding never grows");
  return 0;
}
