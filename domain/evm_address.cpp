#include "domain/evm_address.hpp"

namespace mg::domain {

std::optional<std::string> canonical_evm_address(std::string_view text) {
  if (text.size() != 42 || text[0] != '0' || text[1] != 'x')
    return std::nullopt;
  std::string out = "0x";
  for (char c : text.substr(2)) {
    if (c >= 'A' && c <= 'F')
      c = static_cast<char>(c - 'A' + 'a');
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return std::nullopt;
    out += c;
  }
  return out;
}

std::optional<std::string> observed_evm_address(std::string_view text) {
  auto address = canonical_evm_address(text);
  if (address && address->find_first_not_of('0', 2) == std::string::npos)
    return std::nullopt;
  return address;
}

} // namespace mg::domain
