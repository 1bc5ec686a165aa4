#pragma once
// CCTP burn caller alignment (reference dispatch pipeline:
// validate_cctp_burn_caller_alignment() before preflight). A `cctp_burn`
// is sent by the node's signer, so that signer must be the identity an
// operator enrolled for it (signer_identities); a burn that names a
// `destination_caller` lets only that address mint on the other chain, so it
// must be the enrolled identity of the signer of the plan's `cctp_mint` node.
// Otherwise the burn would move money nobody we know can mint.
#include <optional>
#include <string>

namespace mg::domain {

inline constexpr const char* cctp_burn_action = "cctp_burn";
inline constexpr const char* cctp_mint_action = "cctp_mint";
inline constexpr const char* cctp_caller_mismatch_code = "CCTP_CALLER_MISMATCH";

/// One signer's side of the check.
struct cctp_party {
  std::string signer_key;              // empty: the node names no signer
  std::optional<std::string> expected; // enrolled identity, if any
  std::optional<std::string> reported; // what the signer says it is (burn side only)
};

struct cctp_burn_facts {
  cctp_party burn;
  std::string node_config_json = "{}"; // the burn's resolved config
  bool plan_has_mint = false;
  cctp_party mint; // the plan's cctp_mint node, when there is one
};

/// `config.destination_caller` of a burn's resolved config: nullopt when
/// absent, null or "", else the text (which may not be an address at all).
std::optional<std::string> destination_caller_of(const std::string& node_config_json);

/// An address as CCTP carries it, lower-cased: `0x` + 40 hex digits, or the
/// bytes32 form (`0x` + 24 zero digits + the 40) destinationCaller uses.
std::optional<std::string> cctp_address(const std::string& text);

/// Why the burn is not aligned (empty when it is).
std::string cctp_burn_caller_problem(const cctp_burn_facts& f);

} // namespace mg::domain
