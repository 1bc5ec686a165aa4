#include "domain/evm_amount.hpp"

namespace mg::domain {

namespace {

bool all_digits(std::string_view s) {
  for (char c : s)
    if (c < '0' || c > '9')
      return false;
  return true;
}

base_units_result refused(std::string why) {
  return {std::nullopt, std::move(why)};
}

} // namespace

base_units_result to_base_units(std::string_view amount, int decimals) {
  if (decimals < 0 || decimals > max_token_decimals)
    return refused("token decimals must be 0.." + std::to_string(max_token_decimals));
  size_t point = amount.find('.');
  std::string_view whole = amount.substr(0, point);
  std::string_view fraction =
      point == std::string_view::npos ? std::string_view() : amount.substr(point + 1);
  if (whole.empty() || !all_digits(whole) || !all_digits(fraction) ||
      (point != std::string_view::npos && fraction.empty()))
    return refused("amount must be a plain decimal number like 1.5");
  if (fraction.size() > static_cast<size_t>(decimals))
    return refused("amount has " + std::to_string(fraction.size()) +
                   " fractional digits; the token has " + std::to_string(decimals));
  // amount × 10^decimals is the digits of whole ‖ fraction ‖ zero padding.
  std::string digits = std::string(whole) + std::string(fraction) +
                       std::string(static_cast<size_t>(decimals) - fraction.size(), '0');
  auto value = uint256::from_decimal(digits);
  if (!value)
    return refused("amount exceeds 2^256 - 1 base units");
  return {value, {}};
}

std::string from_base_units(const uint256& units, int decimals) {
  std::string digits = units.to_decimal();
  size_t d = decimals > 0 ? static_cast<size_t>(decimals) : 0;
  if (digits.size() <= d)
    digits.insert(0, d + 1 - digits.size(), '0'); // at least one whole digit
  std::string whole = digits.substr(0, digits.size() - d);
  std::string fraction = digits.substr(digits.size() - d);
  size_t last = fraction.find_last_not_of('0');
  fraction = last == std::string::npos ? std::string() : fraction.substr(0, last + 1);
  return fraction.empty() ? whole : whole + "." + fraction;
}

} // namespace mg::domain
