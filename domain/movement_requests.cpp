#include "domain/movement_requests.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <cstring>
#include <initializer_list>
#include <netinet/in.h>

#include "domain/hash.hpp"

namespace mg::domain {

namespace {

using api::field_error;

/// 400 and 422 problems of one body, collected so the answer lists all of
/// the first class that has any.
struct problems {
  std::vector<field_error> bad;           // 400
  std::vector<field_error> unprocessable; // 422

  template <class T> checked<T> refusal() const {
    checked<T> out;
    if (!bad.empty())
      out.error = api::bad_request("invalid request body", bad);
    else
      out.error = api::unprocessable("invalid request body", unprocessable);
    return out;
  }
  bool any() const { return !bad.empty() || !unprocessable.empty(); }
};

bool is_object(const json::value& body, problems& p) {
  if (body.IsObject())
    return true;
  p.bad.push_back({"", "body must be a JSON object"});
  return false;
}

void refuse_unknown_fields(const json::value& body, std::initializer_list<const char*> known,
                           problems& p, const std::string& prefix = "") {
  for (auto it = body.MemberBegin(); it != body.MemberEnd(); ++it) {
    std::string_view name(it->name.GetString(), it->name.GetStringLength());
    bool ok = std::any_of(known.begin(), known.end(), [&](const char* k) { return name == k; });
    if (!ok)
      p.bad.push_back({prefix + std::string(name), "unknown field"});
  }
}

const json::value* member(const json::value& obj, const char* key) {
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

/// The string member `key`, or nullopt with a 400 problem (missing when
/// `required`, or not a string).
std::optional<std::string> string_field(const json::value& obj, const char* key, bool required,
                                        problems& p, const std::string& field) {
  auto* v = member(obj, key);
  if (!v) {
    if (required)
      p.bad.push_back({field, "required"});
    return std::nullopt;
  }
  if (!v->IsString()) {
    p.bad.push_back({field, "must be a string"});
    return std::nullopt;
  }
  return std::string(v->GetString(), v->GetStringLength());
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

} // namespace

bool is_decimal(std::string_view s) {
  auto dot = s.find('.');
  auto whole = s.substr(0, dot);
  auto fraction = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
  auto digits = [](std::string_view d) {
    return !d.empty() &&
           std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!digits(whole))
    return false;
  if (dot != std::string_view::npos && !digits(fraction))
    return false;
  return whole.size() + fraction.size() <= 78;
}

bool is_amount(std::string_view s) {
  return is_decimal(s) && !(s.size() > 1 && s[0] == '0' && s[1] != '.');
}

bool is_positive_decimal(std::string_view s) {
  return is_decimal(s) &&
         std::any_of(s.begin(), s.end(), [](char c) { return c >= '1' && c <= '9'; });
}

int compare_decimals(std::string_view a, std::string_view b) {
  auto split = [](std::string_view s) {
    auto dot = s.find('.');
    auto whole = s.substr(0, dot);
    auto fraction = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
    while (whole.size() > 1 && whole.front() == '0')
      whole.remove_prefix(1);
    while (!fraction.empty() && fraction.back() == '0')
      fraction.remove_suffix(1);
    return std::pair(whole, fraction);
  };
  auto [aw, af] = split(a);
  auto [bw, bf] = split(b);
  if (aw.size() != bw.size())
    return aw.size() < bw.size() ? -1 : 1;
  if (int c = aw.compare(bw))
    return c < 0 ? -1 : 1;
  // Fractions compare digit by digit; the shorter one is padded with zeros.
  for (size_t i = 0; i < std::max(af.size(), bf.size()); ++i) {
    char x = i < af.size() ? af[i] : '0';
    char y = i < bf.size() ? bf[i] : '0';
    if (x != y)
      return x < y ? -1 : 1;
  }
  return 0;
}

bool is_idempotency_key(std::string_view s) {
  return !s.empty() && s.size() <= 128 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == ':' ||
           c == '-';
  });
}

bool is_uuid(std::string_view s) {
  if (s.size() != 36)
    return false;
  for (size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !is_hex(s[i]))
      return false;
  }
  return true;
}

std::optional<int> parse_limit(std::string_view s) {
  if (s.empty())
    return 50;
  if (s.size() > 3 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  int n = std::stoi(std::string(s));
  if (n < 1 || n > 200)
    return std::nullopt;
  return n;
}

std::string encode_cursor(const list_cursor& c) {
  static const char* hex = "0123456789abcdef";
  std::string plain = std::to_string(c.micros) + "," + c.id;
  std::string out;
  for (unsigned char ch : plain) {
    out += hex[ch >> 4];
    out += hex[ch & 15];
  }
  return out;
}

std::optional<list_cursor> decode_cursor(std::string_view s) {
  if (s.empty() || s.size() % 2 || s.size() > 200 || !std::all_of(s.begin(), s.end(), is_hex))
    return std::nullopt;
  std::string plain;
  for (size_t i = 0; i < s.size(); i += 2)
    plain += static_cast<char>(std::stoi(std::string(s.substr(i, 2)), nullptr, 16));
  auto comma = plain.find(',');
  if (comma == std::string::npos)
    return std::nullopt;
  auto micros = std::string_view(plain).substr(0, comma);
  std::string id = plain.substr(comma + 1);
  bool negative = !micros.empty() && micros.front() == '-';
  auto digits = negative ? micros.substr(1) : micros;
  if (digits.empty() || digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      !is_uuid(id))
    return std::nullopt;
  return list_cursor{std::stoll(std::string(micros)), lower(id)};
}

/// The fields a SignRequest carries as strings (reference: str(intent.get(
/// ...)), str(input_params.get('chain_family', 'evm'))): a value of another
/// type would reach a signer as "" or as some rendering of it, so it is
/// refused here. asset and amount are required strings already.
void refuse_non_string_signing_fields(const json::value* intent, const json::value* params,
                                      problems& p) {
  auto check = [&](const json::value* obj, const char* key, const std::string& field) {
    if (!obj || !obj->IsObject())
      return;
    auto* v = member(*obj, key);
    if (v && !v->IsString())
      p.unprocessable.push_back({field, "must be a string when present"});
  };
  check(intent, "destination", "intent.destination");
  check(intent, "source", "intent.source");
  check(params, "chain_family", "input_params.chain_family");
}

checked<create_body> parse_create_body(const json::value& body, bool allow_private_callbacks) {
  problems p;
  if (!is_object(body, p))
    return p.refusal<create_body>();
  refuse_unknown_fields(body,
                        {"template_key", "template_version", "intent", "input_params",
                         "callback_url", "idempotency_key"},
                        p);
  create_body out;
  if (auto key = string_field(body, "template_key", true, p, "template_key")) {
    out.template_key = *key;
    if (key->empty())
      p.unprocessable.push_back({"template_key", "must not be empty"});
  }
  if (auto* v = member(body, "template_version")) {
    if (!v->IsInt())
      p.bad.push_back({"template_version", "must be an integer"});
    else if (v->GetInt() < 1)
      p.unprocessable.push_back({"template_version", "must be at least 1"});
    else
      out.template_version = v->GetInt();
  }
  auto* intent = member(body, "intent");
  if (!intent)
    p.bad.push_back({"intent", "required"});
  else if (!intent->IsObject())
    p.bad.push_back({"intent", "must be an object"});
  else {
    out.intent = json::dump(*intent);
    if (auto asset = string_field(*intent, "asset", true, p, "intent.asset");
        asset && asset->empty())
      p.unprocessable.push_back({"intent.asset", "must not be empty"});
    if (auto amount = string_field(*intent, "amount", true, p, "intent.amount")) {
      out.amount = *amount;
      if (!is_amount(*amount))
        p.unprocessable.push_back({"intent.amount",
                                   "must be a decimal string: digits with an optional .fraction, "
                                   "no leading zero, at most 78 digits"});
      else if (!is_positive_decimal(*amount))
        p.unprocessable.push_back({"intent.amount", "must be greater than 0"});
    }
  }
  if (auto* v = member(body, "input_params")) {
    if (!v->IsObject())
      p.bad.push_back({"input_params", "must be an object"});
    else
      out.input_params = json::dump(*v);
  }
  refuse_non_string_signing_fields(intent, member(body, "input_params"), p);
  if (auto url = string_field(body, "callback_url", false, p, "callback_url")) {
    out.callback_url = *url;
    auto why = callback_url_problem(*url, allow_private_callbacks);
    if (!why.empty())
      p.unprocessable.push_back({"callback_url", why});
  }
  if (auto key = string_field(body, "idempotency_key", true, p, "idempotency_key")) {
    out.idempotency_key = *key;
    if (!is_idempotency_key(*key))
      p.unprocessable.push_back({"idempotency_key", "must be 1-128 characters of [A-Za-z0-9._:-]"});
  }
  if (p.any())
    return p.refusal<create_body>();
  // "Same body" means equal after JSON parsing: hash the canonical form.
  out.body_hash = sha256_hex(json::canonical(body));
  return {std::move(out), {}};
}

checked<approve_body> parse_approve_body(const json::value& body) {
  problems p;
  if (!is_object(body, p))
    return p.refusal<approve_body>();
  refuse_unknown_fields(body, {"approver_id"}, p);
  approve_body out;
  if (auto id = string_field(body, "approver_id", false, p, "approver_id"))
    out.approver_id = *id;
  if (p.any())
    return p.refusal<approve_body>();
  return {std::move(out), {}};
}

checked<reason_body> parse_reason_body(const json::value& body) {
  problems p;
  if (!is_object(body, p))
    return p.refusal<reason_body>();
  refuse_unknown_fields(body, {"reason"}, p);
  reason_body out;
  if (auto reason = string_field(body, "reason", false, p, "reason"))
    out.reason = *reason;
  if (p.any())
    return p.refusal<reason_body>();
  return {std::move(out), {}};
}

checked<bool> parse_resume_body(const json::value& body) {
  problems p;
  if (is_object(body, p))
    refuse_unknown_fields(body, {}, p);
  if (p.any())
    return p.refusal<bool>();
  return {true, {}};
}

checked<retry_body> parse_retry_body(const json::value& body) {
  problems p;
  if (!is_object(body, p))
    return p.refusal<retry_body>();
  refuse_unknown_fields(body, {"node_key"}, p);
  retry_body out;
  if (auto key = string_field(body, "node_key", true, p, "node_key")) {
    out.node_key = *key;
    if (key->empty())
      p.unprocessable.push_back({"node_key", "must not be empty"});
  }
  if (p.any())
    return p.refusal<retry_body>();
  return {std::move(out), {}};
}

checked<complete_body> parse_complete_body(const json::value& body) {
  problems p;
  if (!is_object(body, p))
    return p.refusal<complete_body>();
  refuse_unknown_fields(body, {"provider_refs"}, p);
  complete_body out;
  if (auto* v = member(body, "provider_refs")) {
    if (!v->IsObject())
      p.bad.push_back({"provider_refs", "must be an object"});
    else
      out.provider_refs = json::dump(*v);
  }
  if (p.any())
    return p.refusal<complete_body>();
  return {std::move(out), {}};
}

} // namespace mg::domain
