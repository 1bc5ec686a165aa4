#include "domain/uint256.hpp"

#include <ostream>

#include "domain/hash.hpp"

namespace mg::domain {

namespace {

using u128 = unsigned __int128;

} // namespace

uint256 uint256::max() {
  uint256 v;
  v.limbs_ = {~0ull, ~0ull, ~0ull, ~0ull};
  return v;
}

std::optional<uint256> uint256::from_decimal(std::string_view text) {
  if (text.empty())
    return std::nullopt;
  uint256 value;
  for (char c : text) {
    if (c < '0' || c > '9')
      return std::nullopt;
    auto next = checked_mul(value, 10);
    if (!next)
      return std::nullopt;
    next = checked_add(*next, static_cast<std::uint64_t>(c - '0'));
    if (!next)
      return std::nullopt;
    value = *next;
  }
  return value;
}

std::optional<uint256> uint256::from_hex(std::string_view text) {
  if (text.size() < 3 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X'))
    return std::nullopt;
  text.remove_prefix(2);
  uint256 value;
  for (char c : text) {
    int digit = hex_digit_value(c);
    if (digit < 0)
      return std::nullopt;
    // Shifting out a non-zero top nibble would lose bits: too large.
    if (value.limbs_[3] >> 60)
      return std::nullopt;
    for (int i = 3; i > 0; --i)
      value.limbs_[i] = (value.limbs_[i] << 4) | (value.limbs_[i - 1] >> 60);
    value.limbs_[0] = (value.limbs_[0] << 4) | static_cast<std::uint64_t>(digit);
  }
  return value;
}

std::optional<uint256> uint256::from_big_endian(std::string_view bytes) {
  if (bytes.size() > 32)
    return std::nullopt;
  uint256 value;
  for (size_t i = 0; i < bytes.size(); ++i) {
    size_t bit = 8 * (bytes.size() - 1 - i); // position of this byte's lowest bit
    value.limbs_[bit / 64] |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[i]))
                              << (bit % 64);
  }
  return value;
}

std::uint32_t uint256::divide_small(std::uint32_t divisor) {
  u128 remainder = 0;
  for (int i = 3; i >= 0; --i) {
    u128 current = (remainder << 64) | limbs_[i];
    limbs_[i] = static_cast<std::uint64_t>(current / divisor);
    remainder = current % divisor;
  }
  return static_cast<std::uint32_t>(remainder);
}

std::string uint256::to_decimal() const {
  if (is_zero())
    return "0";
  uint256 rest = *this;
  std::string reversed;
  while (!rest.is_zero())
    reversed += static_cast<char>('0' + rest.divide_small(10));
  return std::string(reversed.rbegin(), reversed.rend());
}

std::string uint256::to_big_endian_32() const {
  std::string out(32, '\0');
  for (size_t i = 0; i < 32; ++i) {
    size_t bit = 8 * (31 - i);
    out[i] = static_cast<char>((limbs_[bit / 64] >> (bit % 64)) & 0xff);
  }
  return out;
}

std::string uint256::to_big_endian() const {
  std::string full = to_big_endian_32();
  size_t first = full.find_first_not_of('\0');
  return first == std::string::npos ? std::string() : full.substr(first);
}

std::string uint256::to_hex() const {
  std::string bytes = to_big_endian_32();
  std::string hex = domain::to_hex(reinterpret_cast<const unsigned char*>(bytes.data()), 32);
  size_t first = hex.find_first_not_of('0');
  return "0x" + (first == std::string::npos ? std::string("0") : hex.substr(first));
}

std::optional<uint256> checked_add(const uint256& a, const uint256& b) {
  uint256 sum;
  u128 carry = 0;
  for (int i = 0; i < 4; ++i) {
    u128 s = static_cast<u128>(a.limbs_[i]) + b.limbs_[i] + carry;
    sum.limbs_[i] = static_cast<std::uint64_t>(s);
    carry = s >> 64;
  }
  if (carry)
    return std::nullopt;
  return sum;
}

std::optional<uint256> checked_sub(const uint256& a, const uint256& b) {
  if (a < b)
    return std::nullopt;
  uint256 diff;
  std::uint64_t borrow = 0;
  for (int i = 0; i < 4; ++i) {
    std::uint64_t subtrahend = b.limbs_[i] + borrow;
    // borrow out when b's limb plus the borrow wrapped or exceeds a's limb
    bool wrapped = borrow && subtrahend == 0;
    diff.limbs_[i] = a.limbs_[i] - subtrahend;
    borrow = (wrapped || a.limbs_[i] < subtrahend) ? 1 : 0;
  }
  return diff;
}

std::optional<uint256> checked_mul(const uint256& a, const uint256& b) {
  // Schoolbook multiplication into 8 limbs; any non-zero high limb overflows.
  std::array<std::uint64_t, 8> product{};
  for (int i = 0; i < 4; ++i) {
    u128 carry = 0;
    for (int j = 0; j < 4; ++j) {
      u128 cell = static_cast<u128>(a.limbs_[i]) * b.limbs_[j] + product[i + j] + carry;
      product[i + j] = static_cast<std::uint64_t>(cell);
      carry = cell >> 64;
    }
    product[i + 4] = static_cast<std::uint64_t>(carry);
  }
  if (product[4] | product[5] | product[6] | product[7])
    return std::nullopt;
  uint256 result;
  for (int i = 0; i < 4; ++i)
    result.limbs_[i] = product[i];
  return result;
}

int compare(const uint256& a, const uint256& b) {
  for (int i = 3; i >= 0; --i) {
    if (a.limbs_[i] != b.limbs_[i])
      return a.limbs_[i] < b.limbs_[i] ? -1 : 1;
  }
  return 0;
}

std::ostream& operator<<(std::ostream& out, const uint256& v) {
  return out << v.to_decimal();
}

std::optional<std::uint64_t> uint256::to_u64() const {
  if (limbs_[1] | limbs_[2] | limbs_[3])
    return std::nullopt;
  return limbs_[0];
}

} // namespace mg::domain
