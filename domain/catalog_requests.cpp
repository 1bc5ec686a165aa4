#include "domain/catalog_requests.hpp"

#include <algorithm>

namespace mg::domain {

namespace {

/// Collects field errors so every one is reported at once.
struct problems {
  std::vector<api::field_error> details;

  void add(std::string field, std::string message) {
    details.push_back({std::move(field), std::move(message)});
  }
  template <class T> checked<T> refusal() {
    return {std::nullopt, api::bad_request("invalid request body", std::move(details))};
  }
};

bool is_object(const json::value& body, problems& p) {
  if (body.IsObject())
    return true;
  p.add("", "body must be a JSON object");
  return false;
}

void refuse_unknown_fields(const json::value& body, std::initializer_list<const char*> known,
                           problems& p) {
  for (auto& m : body.GetObject()) {
    std::string name(m.name.GetString(), m.name.GetStringLength());
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return name == k; }))
      p.add(name, "unknown field");
  }
}

/// A required string member, or nullopt with the problem noted.
std::optional<std::string> required_string(const json::value& body, const char* name, problems& p) {
  auto it = body.FindMember(name);
  if (it == body.MemberEnd()) {
    p.add(name, "is required");
    return std::nullopt;
  }
  if (!it->value.IsString()) {
    p.add(name, "must be a string");
    return std::nullopt;
  }
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

bool is_hex_digit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

} // namespace

checked<proposal_body> parse_proposal_body(const json::value& body) {
  problems p;
  if (!is_object(body, p))
    return p.refusal<proposal_body>();
  refuse_unknown_fields(body, {"template_key", "plan"}, p);
  proposal_body out;
  if (auto key = required_string(body, "template_key", p)) {
    if (key->empty())
      p.add("template_key", "must not be empty");
    out.template_key = *key;
  }
  auto plan = body.FindMember("plan");
  if (plan == body.MemberEnd())
    p.add("plan", "is required");
  else if (!plan->value.IsObject())
    p.add("plan", "must be a JSON object");
  else
    out.plan = json::dump(plan->value);
  if (!p.details.empty())
    return p.refusal<proposal_body>();
  return {std::move(out), {}};
}

std::string plan_with_version(const std::string& plan, int version) {
  auto d = json::parse_trusted(plan, "plan");
  // Every "version" member goes, however many the text held: the one read
  // back must be the one set here.
  while (d.RemoveMember("version")) {
  }
  d.AddMember("version", version, d.GetAllocator());
  return json::dump(d);
}

checked<identity_body> parse_identity_body(const json::value& body) {
  problems p;
  if (!is_object(body, p))
    return p.refusal<identity_body>();
  refuse_unknown_fields(body, {"address"}, p);
  identity_body out;
  if (auto address = required_string(body, "address", p))
    out.address = *address;
  if (!p.details.empty())
    return p.refusal<identity_body>();
  return {std::move(out), {}};
}

std::string encode_key_cursor(const std::string& key) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char ch : key) {
    out += hex[ch >> 4];
    out += hex[ch & 15];
  }
  return out;
}

std::optional<std::string> decode_key_cursor(std::string_view s) {
  if (s.empty() || s.size() % 2 || s.size() > 1024 ||
      !std::all_of(s.begin(), s.end(), is_hex_digit))
    return std::nullopt;
  std::string key;
  for (size_t i = 0; i < s.size(); i += 2)
    key += static_cast<char>(std::stoi(std::string(s.substr(i, 2)), nullptr, 16));
  return key;
}

std::string signer_posture(const std::string& expected_address,
                           const std::vector<signer_observation>& rows) {
  if (std::all_of(rows.begin(), rows.end(), [](auto& r) { return r.orphan; }))
    return "orphan";
  if (expected_address.empty())
    return "unenrolled";
  bool all_match = std::all_of(rows.begin(), rows.end(), [&](auto& r) {
    return r.orphan || r.observed_address == expected_address;
  });
  return all_match ? "match" : "mismatch";
}

} // namespace mg::domain
