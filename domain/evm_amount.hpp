#pragma once
// Token amounts as people write them ("1.5") ↔ base units (wei, or an ERC-20
// token's smallest unit), exactly: no floating point, no rounding. An amount
// that cannot be represented is refused, never approximated.
#include <optional>
#include <string>
#include <string_view>

#include "domain/uint256.hpp"

namespace mg::domain {

/// EVM tokens declare at most this many decimals in practice (uint8 in
/// ERC-20); more would make 10^decimals itself overflow 2^256.
inline constexpr int max_token_decimals = 77;

struct base_units_result {
  std::optional<uint256> value;
  std::string error; // why the amount was refused, when !value
};

/// `amount` is digits with an optional `.` and fraction ("1", "1.5", "0.001",
/// ".5" and "5." are refused: write "0.5" and "5"); no sign, exponent or
/// spaces. Refused when it has more fractional digits than `decimals` (even
/// if they are zeros: the caller asked for precision the token lacks) or when
/// the result exceeds 2^256 - 1.
base_units_result to_base_units(std::string_view amount, int decimals);

/// Base units → the decimal amount, without trailing fractional zeros and
/// without a dangling point: 1500000000000000000 with 18 decimals → "1.5",
/// 10^18 → "1", 0 → "0".
std::string from_base_units(const uint256& units, int decimals);

} // namespace mg::domain
