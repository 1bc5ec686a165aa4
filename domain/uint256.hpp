#pragma once
// An unsigned 256-bit integer for EVM quantities (wei, token base units, gas
// prices): balances routinely exceed 2^64 and must never pass through a
// double. Arithmetic is checked: overflow is reported, never wrapped.
#include <array>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace mg::domain {

class uint256 {
public:
  constexpr uint256() = default;
  constexpr uint256(std::uint64_t v) : limbs_{v, 0, 0, 0} {} // NOLINT: implicit on purpose

  /// 2^256 - 1.
  static uint256 max();

  /// One or more decimal digits (leading zeros allowed); nullopt on any other
  /// character, on empty input, or when the value exceeds 2^256 - 1.
  static std::optional<uint256> from_decimal(std::string_view text);
  /// `0x` (or `0X`) + one or more hex digits of either case, as JSON-RPC
  /// quantities and hashes are written; nullopt when malformed or too large.
  static std::optional<uint256> from_hex(std::string_view text);
  /// Big-endian bytes, at most 32 of them (leading zero bytes allowed).
  static std::optional<uint256> from_big_endian(std::string_view bytes);

  std::string to_decimal() const;
  /// `0x` + lower-case hex without leading zeros; zero is `0x0` (JSON-RPC
  /// quantity encoding).
  std::string to_hex() const;
  /// Big-endian bytes without leading zeros; zero is the empty string (the
  /// form RLP encodes integers in).
  std::string to_big_endian() const;
  /// Exactly 32 big-endian bytes (ABI words, signature halves).
  std::string to_big_endian_32() const;

  /// The value when it fits in 64 bits (chain ids, nonces, block numbers).
  std::optional<std::uint64_t> to_u64() const;
  bool is_zero() const { return (limbs_[0] | limbs_[1] | limbs_[2] | limbs_[3]) == 0; }

  /// a + b, a - b, a * b; nullopt when the result leaves [0, 2^256 - 1].
  friend std::optional<uint256> checked_add(const uint256& a, const uint256& b);
  friend std::optional<uint256> checked_sub(const uint256& a, const uint256& b);
  friend std::optional<uint256> checked_mul(const uint256& a, const uint256& b);

  /// -1, 0 or 1.
  friend int compare(const uint256& a, const uint256& b);
  friend bool operator==(const uint256& a, const uint256& b) { return compare(a, b) == 0; }
  friend bool operator!=(const uint256& a, const uint256& b) { return compare(a, b) != 0; }
  friend bool operator<(const uint256& a, const uint256& b) { return compare(a, b) < 0; }
  friend bool operator<=(const uint256& a, const uint256& b) { return compare(a, b) <= 0; }
  friend bool operator>(const uint256& a, const uint256& b) { return compare(a, b) > 0; }
  friend bool operator>=(const uint256& a, const uint256& b) { return compare(a, b) >= 0; }

  /// Divides in place by a small divisor (> 0) and returns the remainder:
  /// the step decimal printing is built on.
  std::uint32_t divide_small(std::uint32_t divisor);

private:
  // Little-endian limbs: limbs_[0] holds the least significant 64 bits.
  std::array<std::uint64_t, 4> limbs_{};
};

// Namespace-scope declarations so calls with plain integer arguments
// (checked_mul(chain_id, 2)) find them without argument-dependent lookup.
std::optional<uint256> checked_add(const uint256& a, const uint256& b);
std::optional<uint256> checked_sub(const uint256& a, const uint256& b);
std::optional<uint256> checked_mul(const uint256& a, const uint256& b);
int compare(const uint256& a, const uint256& b);

/// Writes the decimal form (logs, test diagnostics).
std::ostream& operator<<(std::ostream& out, const uint256& v);

} // namespace mg::domain
