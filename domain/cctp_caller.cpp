#include "domain/cctp_caller.hpp"

#include "domain/evm_address.hpp"
#include "domain/json.hpp"

namespace mg::domain {

std::optional<std::string> destination_caller_of(const std::string& node_config_json) {
  auto cfg = json::parse(node_config_json);
  if (!cfg || !cfg->IsObject())
    return std::nullopt;
  auto it = cfg->FindMember("destination_caller");
  if (it == cfg->MemberEnd() || it->value.IsNull())
    return std::nullopt;
  if (!it->value.IsString())
    return json::dump(it->value); // present but not text: never an address
  std::string text(it->value.GetString(), it->value.GetStringLength());
  if (text.empty())
    return std::nullopt;
  return text;
}

std::optional<std::string> cctp_address(const std::string& text) {
  if (text.size() == 66 && (text.compare(0, 2, "0x") == 0 || text.compare(0, 2, "0X") == 0) &&
      text.find_first_not_of('0', 2) >= 26)
    return canonical_evm_address("0x" + text.substr(26));
  return canonical_evm_address(text);
}

namespace {

/// The enrolled identity of `p`, or why there is none to compare with.
std::string enrolled(const cctp_party& p, const char* role, std::optional<std::string>& out) {
  if (p.signer_key.empty())
    return std::string("the ") + role + " names no signer";
  if (!p.expected || p.expected->empty())
    return std::string("signer '") + p.signer_key + "' of the " + role +
           " has no enrolled identity";
  out = canonical_evm_address(*p.expected);
  if (!out)
    return std::string("signer '") + p.signer_key + "' has an unusable enrolled identity";
  return {};
}

} // namespace

std::string cctp_burn_caller_problem(const cctp_burn_facts& f) {
  std::optional<std::string> burn_expected;
  if (auto why = enrolled(f.burn, "burn", burn_expected); !why.empty())
    return why;
  if (!f.burn.reported)
    return "signer '" + f.burn.signer_key + "' is not available to say who it is";
  auto reported = canonical_evm_address(*f.burn.reported);
  if (!reported || *reported != *burn_expected)
    return "the burn would be sent by " + *f.burn.reported + ", not by " + *burn_expected +
           ", the enrolled identity of signer '" + f.burn.signer_key + "'";
  auto destination = destination_caller_of(f.node_config_json);
  if (!destination)
    return {};
  if (!f.plan_has_mint)
    return "destination_caller is set but the plan has no cctp_mint node";
  std::optional<std::string> mint_expected;
  if (auto why = enrolled(f.mint, "mint", mint_expected); !why.empty())
    return why;
  auto named = cctp_address(*destination);
  if (!named || *named != *mint_expected)
    return "destination_caller " + *destination + " is not " + *mint_expected +
           ", the enrolled identity of the mint's signer '" + f.mint.signer_key + "'";
  return {};
}

} // namespace mg::domain
