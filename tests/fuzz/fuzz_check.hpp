#pragma once
// Helpers shared by the libFuzzer targets: an invariant check that aborts
// (libFuzzer keeps the input as a crash), and input slicing.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

/// Aborts with `what` when `cond` is false: a broken invariant is a crash.
#define MG_FUZZ_CHECK(cond, what)                                                                  \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      std::fprintf(stderr, "invariant broken at %s:%d: %s (%s)\n", __FILE__, __LINE__, what,       \
                   #cond);                                                                         \
      std::abort();                                                                                \
    }                                                                                              \
  } while (0)

namespace mg::fuzz {

inline std::string_view bytes(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// The input cut at every `sep` byte into at most `n` pieces (the last one
/// keeps the rest), so one input can carry several fields.
inline std::vector<std::string> split(std::string_view in, char sep, size_t n) {
  std::vector<std::string> out;
  while (out.size() + 1 < n) {
    auto at = in.find(sep);
    if (at == std::string_view::npos)
      break;
    out.emplace_back(in.substr(0, at));
    in.remove_prefix(at + 1);
  }
  out.emplace_back(in);
  while (out.size() < n)
    out.emplace_back();
  return out;
}

inline bool is_lower_hex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  return true;
}

} // namespace mg::fuzz
