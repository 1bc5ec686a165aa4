#pragma once
// Pure checks of the catalog calls' inputs (SPEC §5): template proposals,
// expected signer identities, template list cursors, and the signer
// identity posture derived on read.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/movement_requests.hpp"

namespace mg::domain {

/// POST /v3/template-proposals `{template_key, plan}` (400 when a field is
/// missing, of the wrong type, or unknown).
struct proposal_body {
  std::string template_key;
  std::string plan; // the JSON object as given (compact)
};
checked<proposal_body> parse_proposal_body(const json::value& body);

/// `plan` (a JSON object) with its version set to `version`: a proposal is
/// published as the key's next version whatever version it carries.
std::string plan_with_version(const std::string& plan, int version);

/// PUT /v3/signers/{key}/expected-identity `{address}`; the address format
/// is checked later (422, after the signer is found).
struct identity_body {
  std::string address;
};
checked<identity_body> parse_identity_body(const json::value& body);

/// Keyset cursor over template keys (opaque hex of the last key).
std::string encode_key_cursor(const std::string& key);
std::optional<std::string> decode_key_cursor(std::string_view s);

/// One process's view of a signer, as the posture needs it.
struct signer_observation {
  bool orphan = false;
  std::string observed_address; // "" = none
};

/// orphan (every row orphan), unenrolled (no expected address), match (the
/// observed address equals the expected one on every active row), else
/// mismatch.
std::string signer_posture(const std::string& expected_address,
                           const std::vector<signer_observation>& rows);

} // namespace mg::domain
