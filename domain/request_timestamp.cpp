#include "domain/request_timestamp.hpp"

namespace mg::api {

std::optional<long long> parse_request_timestamp(std::string_view text) {
  const bool negative = !text.empty() && text.front() == '-';
  std::string_view digits = negative ? text.substr(1) : text;
  if (digits.empty() || digits.size() > 18)
    return std::nullopt;
  long long value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return negative ? -value : value;
}

} // namespace mg::api
