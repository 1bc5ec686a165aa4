#pragma once
// EVM addresses as signers report them and operators enrol them (SPEC §4,
// §5): `0x` + 40 hex digits, compared and stored lower-case.
#include <optional>
#include <string>
#include <string_view>

namespace mg::domain {

/// The lower-cased address when `text` is `0x` + 40 hex digits (of either
/// case), else nullopt.
std::optional<std::string> canonical_evm_address(std::string_view text);

/// As canonical_evm_address, but the zero address is refused too: a signer
/// reporting it has no identity to observe.
std::optional<std::string> observed_evm_address(std::string_view text);

} // namespace mg::domain
