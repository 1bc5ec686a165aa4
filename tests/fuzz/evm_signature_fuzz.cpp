// The EVM text a signer, an RPC node or an operator hands over: 65-byte
// signatures, 0x-hex, addresses (EIP-55) and base-unit quantities.
// Invariants: parse_signature_65 ∘ format_signature_65 is the identity on
// what it accepts (v normalised to 27/28); 0x-hex round-trips; an address
// classified valid has a checksum form that classifies as checksummed and
// parses to the same 20 bytes; canonical_evm_address is the lower case.
#include <cctype>

#include "domain/evm_address.hpp"
#include "domain/evm_tx.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mg::domain;

namespace {

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string upper(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string s(mg::fuzz::bytes(data, size));

  if (auto sig = parse_signature_65(s)) {
    MG_FUZZ_CHECK(sig->recid == 0 || sig->recid == 1, "recid 0 or 1");
    const std::string text = format_signature_65(*sig);
    MG_FUZZ_CHECK(text.size() == 132, "0x + 130 hex digits");
    auto again = parse_signature_65(text);
    MG_FUZZ_CHECK(again && again->r == sig->r && again->s == sig->s && again->recid == sig->recid,
                  "signature round trip");
    // The 0x is optional on input (parse_0x_hex); r ‖ s are kept as given.
    const size_t from = s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 2 : 0;
    MG_FUZZ_CHECK(lower(text.substr(2, 128)) == lower(s.substr(from, 128)),
                  "r and s kept as given");
  }

  if (auto bytes = parse_0x_hex(s)) {
    MG_FUZZ_CHECK(parse_0x_hex(to_0x_hex(*bytes)) == bytes, "hex round trip");
    bool prefixed = s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    std::string digits = prefixed ? s.substr(2) : s;
    MG_FUZZ_CHECK(to_0x_hex(*bytes) == "0x" + lower(digits), "hex text kept");
  }

  auto kind = classify_evm_address(s);
  auto parsed = parse_evm_address(s);
  MG_FUZZ_CHECK(parsed.has_value() == (kind != address_case::invalid), "parse iff valid");
  if (parsed) {
    MG_FUZZ_CHECK(parsed->size() == 20, "20 bytes");
    auto checksummed = eip55_checksum(s);
    MG_FUZZ_CHECK(checksummed.has_value(), "a valid address has an EIP-55 form");
    // Single-case EIP-55 forms (no letters, or every letter upper) carry no
    // visible checksum.
    const std::string form = checksummed->substr(2);
    bool single_case = lower(form) == form || upper(form) == form;
    MG_FUZZ_CHECK(classify_evm_address(*checksummed) ==
                      (single_case ? address_case::unchecksummed : address_case::checksummed),
                  "EIP-55 form classifies as checksummed");
    MG_FUZZ_CHECK(parse_evm_address(*checksummed) == parsed, "same bytes");
    if (kind == address_case::checksummed)
      MG_FUZZ_CHECK(*checksummed == s, "a checksummed address is its EIP-55 form");
  }
  if (auto c = canonical_evm_address(s)) {
    MG_FUZZ_CHECK(*c == lower(s) && c->size() == 42, "canonical is lower case");
    MG_FUZZ_CHECK(parse_evm_address(*c).has_value(), "canonical parses");
  }
  if (auto o = observed_evm_address(s))
    MG_FUZZ_CHECK(*o != "0x0000000000000000000000000000000000000000", "zero address refused");
  return 0;
}
