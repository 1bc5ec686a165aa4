#include "domain/provider_json.hpp"

#include <cmath>
#include <string_view>
#include <utility>
#include <vector>

#include "domain/json.hpp"
#include "domain/json_writer.hpp"

namespace mg::domain {

namespace {

json::document parse_object(const std::string& text, const char* what) {
  auto doc = parse_provider_json(text, what);
  if (!doc.IsObject())
    throw provider_protocol_error(std::string("malformed ") + what + " JSON: not an object");
  return doc;
}

/// A JSON-valued member that must be of one kind when present (null or
/// absent gives `fallback`), back as text.
std::string typed_raw(const json::value& o, const char* k, bool object, const char* fallback) {
  auto it = o.FindMember(k);
  if (it == o.MemberEnd() || it->value.IsNull())
    return fallback;
  if (object ? !it->value.IsObject() : !it->value.IsArray())
    throw provider_protocol_error(std::string("member '") + k + "' must be " +
                                  (object ? "an object" : "an array"));
  return json::dump(it->value);
}

std::string str(const json::value& o, const char* k, std::string fallback = {}) {
  auto it = o.FindMember(k);
  if (it == o.MemberEnd() || it->value.IsNull())
    return fallback;
  if (!it->value.IsString())
    throw provider_protocol_error(std::string("member '") + k + "' must be a string");
  return it->value.GetString();
}

/// A JSON-valued field back as text (default when absent).
std::string raw(const json::value& o, const char* k, const char* fallback) {
  auto it = o.FindMember(k);
  return it == o.MemberEnd() ? fallback : json::dump(it->value);
}

int integer(const json::value& o, const char* k) {
  auto it = o.FindMember(k);
  if (it == o.MemberEnd())
    return 0;
  if (!it->value.IsInt())
    throw provider_protocol_error(std::string("member '") + k + "' must be an integer");
  return it->value.GetInt();
}

bool is_null(const std::string& text) {
  auto first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text.compare(first, 4, "null") == 0 &&
         text.find_first_not_of(" \t\r\n", first + 4) == std::string::npos;
}

step_result step_result_of(const json::value& o) {
  step_result r;
  auto next = str(o, "next_state");
  if (!next.empty()) {
    r.next_state = parse_node_state(next);
    if (!r.next_state)
      throw provider_protocol_error("unknown next_state '" + next + "'");
  }
  r.provider_state = str(o, "provider_state");
  r.provider_refs = typed_raw(o, "provider_refs", true, "{}");
  r.provider_ref_id = str(o, "provider_ref_id");
  r.generated_artifacts = typed_raw(o, "generated_artifacts", false, "[]");
  auto it = o.FindMember("retry_after_seconds");
  if (it != o.MemberEnd() && !it->value.IsNull()) {
    if (!it->value.IsNumber())
      throw provider_protocol_error("retry_after_seconds must be a number");
    r.retry_after_seconds = it->value.GetDouble();
  }
  r.error_code = str(o, "error_code");
  r.error_detail = str(o, "error_detail");
  return r;
}

} // namespace

json::document parse_provider_json(const std::string& text, const char* what) {
  if (text.size() > max_answer_bytes)
    throw provider_protocol_error(std::string(what) + " of " + std::to_string(text.size()) +
                                  " bytes exceeds the cap of " + std::to_string(max_answer_bytes));
  // The hostile-input reader (SPEC §5): every byte is read, so nothing
  // after a NUL hides, and strings, names and depth are checked.
  static_assert(max_answer_depth == json::max_input_depth, "answers nest like any input");
  std::string error;
  auto doc = json::parse(text, &error);
  if (!doc)
    throw provider_protocol_error(std::string("malformed ") + what + " JSON: " + error);
  return std::move(*doc);
}

std::string to_json(const execution_context& c) {
  return json::writer()
      .begin_object()
      .member("protocol_version", c.protocol_version)
      .member("request_id", c.request_id)
      .member("request_node_id", c.request_node_id)
      .member("compiled_plan_hash", c.compiled_plan_hash)
      .member("template_key", c.template_key)
      .member("template_version", c.template_version)
      .member("node_key", c.node_key)
      .member("node_kind", c.node_kind)
      .member("action_type", c.action_type)
      .member("attempt_no", c.attempt_no)
      .key("intent")
      .raw(c.intent)
      .key("input_params")
      .raw(c.input_params)
      .key("resolved_bindings")
      .raw(c.resolved_bindings)
      .key("risk_controls")
      .raw(c.risk_controls)
      .key("prior_artifacts")
      .raw(c.prior_artifacts)
      .key("node_config")
      .raw(c.node_config)
      .key("provider_context")
      .raw(c.provider_context)
      .key("timeout_policy")
      .raw(c.timeout_policy)
      .member("idempotency_key", c.idempotency_key)
      .key("provider_refs")
      .raw(c.provider_refs)
      .end_object()
      .str();
}

execution_context execution_context_from_json(const std::string& text) {
  auto o = parse_object(text, "execution_context");
  execution_context c;
  c.protocol_version = str(o, "protocol_version", c.protocol_version);
  c.request_id = str(o, "request_id");
  c.request_node_id = str(o, "request_node_id");
  c.compiled_plan_hash = str(o, "compiled_plan_hash");
  c.template_key = str(o, "template_key");
  c.template_version = integer(o, "template_version");
  c.node_key = str(o, "node_key");
  c.node_kind = str(o, "node_kind");
  c.action_type = str(o, "action_type");
  c.attempt_no = integer(o, "attempt_no");
  c.intent = raw(o, "intent", "{}");
  c.input_params = raw(o, "input_params", "{}");
  c.resolved_bindings = raw(o, "resolved_bindings", "{}");
  c.risk_controls = raw(o, "risk_controls", "{}");
  c.prior_artifacts = raw(o, "prior_artifacts", "[]");
  c.node_config = raw(o, "node_config", "{}");
  c.provider_context = raw(o, "provider_context", "{}");
  c.timeout_policy = raw(o, "timeout_policy", "{}");
  c.idempotency_key = str(o, "idempotency_key");
  c.provider_refs = raw(o, "provider_refs", "{}");
  return c;
}

std::string to_json(const step_result& r) {
  json::writer w;
  w.begin_object();
  if (r.next_state)
    w.member("next_state", std::string(to_string(*r.next_state)));
  w.member("provider_state", r.provider_state)
      .key("provider_refs")
      .raw(r.provider_refs)
      .member("provider_ref_id", r.provider_ref_id)
      .key("generated_artifacts")
      .raw(r.generated_artifacts);
  if (r.retry_after_seconds && std::isfinite(*r.retry_after_seconds)) // JSON has no NaN/inf
    w.member("retry_after_seconds", *r.retry_after_seconds);
  return w.member("error_code", r.error_code)
      .member("error_detail", r.error_detail)
      .end_object()
      .str();
}

step_result step_result_from_json(const std::string& text) {
  return step_result_of(parse_object(text, "step_result"));
}

std::string to_json(const std::optional<step_result>& r) {
  return r ? to_json(*r) : "null";
}

std::optional<step_result> optional_step_result_from_json(const std::string& text) {
  if (is_null(text))
    return std::nullopt;
  return step_result_from_json(text);
}

std::string to_json(const prepared_action& a) {
  return json::writer()
      .begin_object()
      .member("action_type", a.action_type)
      .member("payload_format", a.payload_format)
      .member("payload", a.payload)
      .member("payload_hash", a.payload_hash)
      .end_object()
      .str();
}

prepared_action prepared_action_from_json(const std::string& text) {
  auto o = parse_object(text, "prepared_action");
  prepared_action a;
  a.action_type = str(o, "action_type");
  a.payload_format = str(o, "payload_format", a.payload_format);
  a.payload = str(o, "payload");
  a.payload_hash = str(o, "payload_hash");
  return a;
}

std::string to_json(const std::optional<prepared_action>& a) {
  return a ? to_json(*a) : "null";
}

std::optional<prepared_action> optional_prepared_action_from_json(const std::string& text) {
  if (is_null(text))
    return std::nullopt;
  return prepared_action_from_json(text);
}

std::string to_json(const recover_result& r) {
  const char* outcome = r.outcome == recover_outcome::found    ? "found"
                        : r.outcome == recover_outcome::fenced ? "fenced"
                                                               : "still_unknown";
  return json::writer()
      .begin_object()
      .member("outcome", outcome)
      .key("result")
      .raw(to_json(r.result))
      .end_object()
      .str();
}

recover_result recover_result_from_json(const std::string& text) {
  auto o = parse_object(text, "recover_result");
  recover_result r;
  auto outcome = str(o, "outcome");
  if (outcome == "found")
    r.outcome = recover_outcome::found;
  else if (outcome == "fenced")
    r.outcome = recover_outcome::fenced;
  else if (outcome == "still_unknown")
    r.outcome = recover_outcome::still_unknown;
  else
    throw provider_protocol_error("unknown recover outcome '" + outcome + "'");
  auto it = o.FindMember("result");
  if (it != o.MemberEnd()) {
    if (!it->value.IsObject())
      throw provider_protocol_error("recover result must be an object");
    r.result = step_result_of(it->value);
  }
  return r;
}

std::string to_json(const health_result& h) {
  return json::writer()
      .begin_object()
      .member("implemented", h.implemented)
      .member("up", h.up)
      .member("detail", h.detail)
      .member("signer_address", h.signer_address)
      .end_object()
      .str();
}

health_result health_result_from_json(const std::string& text) {
  auto o = parse_object(text, "health_result");
  health_result h;
  auto flag = [&](const char* k, bool fallback) {
    auto it = o.FindMember(k);
    return it != o.MemberEnd() && it->value.IsBool() ? it->value.GetBool() : fallback;
  };
  h.implemented = flag("implemented", true);
  h.up = flag("up", false); // an answer that does not say it is up is not up
  h.detail = str(o, "detail");
  h.signer_address = str(o, "signer_address");
  return h;
}

std::string to_json(const sign_request& r) {
  json::writer intent;
  intent.begin_object()
      .member("action", r.intent.action)
      .member("asset", r.intent.asset)
      .member("amount", r.intent.amount)
      .member("destination", r.intent.destination);
  if (r.intent.max_fee_usd)
    intent.member("max_fee_usd", *r.intent.max_fee_usd);
  intent.member("chain_family", r.intent.chain_family)
      .member("allowed_payload_hash", r.intent.allowed_payload_hash);
  return json::writer()
      .begin_object()
      .member("protocol_version", r.protocol_version)
      .member("request_id", r.request_id)
      .member("request_node_id", r.request_node_id)
      .key("intent")
      .raw(intent.end_object().str())
      .member("payload_format", r.payload_format)
      .member("payload", r.payload)
      .member("payload_hash", r.payload_hash)
      .key("metadata")
      .raw(r.metadata)
      .end_object()
      .str();
}

sign_request sign_request_from_json(const std::string& text) {
  auto o = parse_object(text, "sign_request");
  sign_request r;
  r.protocol_version = str(o, "protocol_version", r.protocol_version);
  r.request_id = str(o, "request_id");
  r.request_node_id = str(o, "request_node_id");
  auto it = o.FindMember("intent");
  if (it == o.MemberEnd() || !it->value.IsObject())
    throw provider_protocol_error("sign_request.intent must be an object");
  auto& i = it->value;
  r.intent.action = str(i, "action");
  r.intent.asset = str(i, "asset");
  r.intent.amount = str(i, "amount");
  r.intent.destination = str(i, "destination");
  if (i.HasMember("max_fee_usd") && !i["max_fee_usd"].IsNull())
    r.intent.max_fee_usd = str(i, "max_fee_usd");
  r.intent.chain_family = str(i, "chain_family", r.intent.chain_family);
  r.intent.allowed_payload_hash = str(i, "allowed_payload_hash");
  r.payload_format = str(o, "payload_format");
  r.payload = str(o, "payload");
  r.payload_hash = str(o, "payload_hash");
  r.metadata = raw(o, "metadata", "{}");
  return r;
}

std::string to_json(const sign_result& s) {
  return json::writer()
      .begin_object()
      .member("signature", s.signature)
      .member("signer_address", s.signer_address)
      .end_object()
      .str();
}

std::string to_json(const sign_result* s) {
  return s ? to_json(*s) : "null";
}

sign_result sign_result_from_json(const std::string& text) {
  auto o = parse_object(text, "sign_result");
  return {str(o, "signature"), str(o, "signer_address")};
}

std::optional<sign_result> optional_sign_result_from_json(const std::string& text) {
  if (is_null(text))
    return std::nullopt;
  return sign_result_from_json(text);
}

} // namespace mg::domain
