#pragma once
// `$ref` resolution for a node's config at dispatch time (reference:
// build_execution_context; failure → CONFIG_REF_UNRESOLVED).
#include <map>
#include <string>

namespace mg::domain {

inline constexpr const char* ref_prefix = "$ref:";

struct ref_resolution {
  bool ok = false;
  std::string config_json; // resolved config (object) when ok
  std::string error;       // which ref failed and why, when !ok
};

/// Replaces every top-level string value of the object `config_json` that
/// starts with `$ref:` by the value it names: `$ref:input.<field>` reads
/// `input_params_json.<field>`; `$ref:<node_key>.<field>` reads
/// `provider_refs.<field>` of that node, which must appear in
/// `completed_provider_refs` (node_key → provider_refs JSON object).
/// Values keep their JSON type. Other values are copied unchanged.
ref_resolution resolve_refs(const std::string& config_json, const std::string& input_params_json,
                            const std::map<std::string, std::string>& completed_provider_refs);

} // namespace mg::domain
