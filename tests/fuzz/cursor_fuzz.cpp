// List cursors and paging parameters from the query string: decode_cursor,
// decode_key_cursor, parse_limit, is_uuid. The keyset query
// (persistence/keyset_page) only binds a decoded cursor's two fields as
// text; the parsing is all here. Invariants: a decoded cursor re-encodes
// to the (lower-cased) input and its id is a UUID; key cursors round-trip;
// a limit is 1..200.
#include <cctype>

#include "domain/catalog_requests.hpp"
#include "domain/movement_requests.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mg;

namespace {

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string s(fuzz::bytes(data, size));

  if (auto c = domain::decode_cursor(s)) {
    MG_FUZZ_CHECK(domain::is_uuid(c->id) && c->id == lower(c->id),
                  "cursor id is a lower-case UUID");
    auto again = domain::decode_cursor(domain::encode_cursor(*c));
    MG_FUZZ_CHECK(again && again->micros == c->micros && again->id == c->id, "cursor round trip");
  }
  if (auto k = domain::decode_key_cursor(s))
    MG_FUZZ_CHECK(domain::decode_key_cursor(domain::encode_key_cursor(*k)) == k,
                  "key cursor round trip");
  // Anything can be carried in a key cursor and read back.
  MG_FUZZ_CHECK(domain::decode_key_cursor(domain::encode_key_cursor(s)) == s || s.empty() ||
                    s.size() > 512,
                "key cursor carries any key");
  if (auto n = domain::parse_limit(s))
    MG_FUZZ_CHECK(*n >= 1 && *n <= 200, "limit in 1..200");
  if (domain::is_uuid(s))
    MG_FUZZ_CHECK(s.size() == 36, "UUID is 36 characters");
  // A real cursor of this UUID round-trips for any time.
  if (domain::is_uuid(s) && size >= 8) {
    long long micros = 0;
    for (int i = 0; i < 8; ++i)
      micros = (micros << 8) | data[i];
    micros %= 1000000000000000000LL;
    auto c = domain::decode_cursor(domain::encode_cursor({micros, s}));
    MG_FUZZ_CHECK(c && c->micros == micros && c->id == lower(s), "encode/decode round trip");
  }
  return 0;
}
