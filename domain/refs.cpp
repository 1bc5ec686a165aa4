#include "domain/refs.hpp"

#include "domain/json.hpp"

#include <vector>

namespace mg::domain {

namespace {

// Parses a JSON object that may legitimately be absent: an empty string or
// JSON null (a completed node without provider_refs, a request without
// input_params) reads as an empty object.
std::optional<json::document> parse_object_or_empty(const std::string& text) {
  json::document d;
  if (text.empty()) {
    d.SetObject();
    return d;
  }
  auto parsed = json::parse(text);
  if (!parsed)
    return std::nullopt;
  if (parsed->IsNull())
    parsed->SetObject();
  if (!parsed->IsObject())
    return std::nullopt;
  return parsed;
}

// Copies member `field` of the object `source_json` into `out`; returns why
// not when it cannot. `what` names the source in the message.
std::string copy_field(const std::string& source_json, const std::string& field,
                       const std::string& what, json::value& out,
                       json::document::AllocatorType& a) {
  auto source = parse_object_or_empty(source_json);
  if (!source)
    return what + " is not a JSON object";
  auto it = source->FindMember(
      json::value(field.c_str(), static_cast<rapidjson::SizeType>(field.size())));
  if (it == source->MemberEnd())
    return what + " has no field '" + field + "'";
  out.CopyFrom(it->value, a);
  return {};
}

// Resolves one ref (`text` is the whole "$ref:..." string) into `out`;
// returns an empty string on success, otherwise a message naming the ref.
std::string resolve_one(const std::string& text, const std::string& input_params_json,
                        const std::map<std::string, std::string>& completed, json::value& out,
                        json::document::AllocatorType& a) {
  const std::string ref = text.substr(std::string(ref_prefix).size());
  const auto dot = ref.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == ref.size())
    return text + ": malformed (expected $ref:input.<field> or $ref:<node_key>.<field>)";
  const std::string source = ref.substr(0, dot), field = ref.substr(dot + 1);
  std::string problem;
  if (source == "input") {
    problem = copy_field(input_params_json, field, "input_params", out, a);
  } else {
    // Only completed nodes are in the map, so an unknown key and a node that
    // has not completed look alike here; compile_plan already refused
    // unknown keys for compiled templates.
    auto it = completed.find(source);
    if (it == completed.end())
      problem = "node '" + source + "' is unknown or has not completed";
    else
      problem = copy_field(it->second, field, "provider_refs of node '" + source + "'", out, a);
  }
  return problem.empty() ? problem : text + ": " + problem;
}

} // namespace

ref_resolution resolve_refs(const std::string& config_json, const std::string& input_params_json,
                            const std::map<std::string, std::string>& completed_provider_refs) {
  ref_resolution result;
  auto parsed = json::parse(config_json);
  if (!parsed || !parsed->IsObject()) {
    result.error = "config is not a JSON object";
    return result;
  }
  json::document& config = *parsed;
  auto& a = config.GetAllocator();
  const std::string prefix = ref_prefix;
  // Every failing ref is reported, so one dispatch failure shows them all.
  std::vector<std::string> errors;
  for (auto& m : config.GetObject()) {
    if (!m.value.IsString())
      continue;
    std::string text(m.value.GetString(), m.value.GetStringLength());
    if (text.rfind(prefix, 0) != 0)
      continue;
    json::value resolved;
    std::string problem =
        resolve_one(text, input_params_json, completed_provider_refs, resolved, a);
    if (problem.empty())
      m.value = resolved; // rapidjson assignment moves
    else
      errors.push_back(std::move(problem));
  }
  if (!errors.empty()) {
    for (auto& e : errors)
      result.error += (result.error.empty() ? "" : "; ") + e;
    return result;
  }
  result.ok = true;
  result.config_json = json::dump(config);
  return result;
}

} // namespace mg::domain
