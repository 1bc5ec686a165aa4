#include "domain/provider_answer.hpp"

#include <algorithm>

#include "domain/provider_json.hpp"

namespace mg::domain {

namespace {

/// Why `text` is not a well-formed JSON value of the kind wanted.
std::string json_problem(const std::string& text, const char* what, bool object) {
  try {
    auto doc = parse_provider_json(text, what);
    if (object ? !doc.IsObject() : !doc.IsArray())
      return std::string(what) + (object ? " is not a JSON object" : " is not a JSON array");
    return {};
  } catch (const provider_protocol_error& e) {
    return e.what();
  }
}

} // namespace

std::string answer_problem(executor_step step, const step_result& r) {
  if (r.next_state && !answer_allowed(step, *r.next_state))
    return std::string(to_string(step)) + " answered next_state " +
           std::string(to_string(*r.next_state)) + ", which it may not";
  if (auto why = json_problem(r.provider_refs, "provider_refs", true); !why.empty())
    return why;
  return json_problem(r.generated_artifacts, "generated_artifacts", false);
}

step_result protocol_violation(executor_step step, const step_result& answer,
                               const std::string& problem) {
  step_result out;
  out.next_state = protocol_error_state(step);
  out.provider_state = answer.provider_state;
  out.provider_ref_id = answer.provider_ref_id;
  if (json_problem(answer.provider_refs, "provider_refs", true).empty())
    out.provider_refs = answer.provider_refs;
  if (json_problem(answer.generated_artifacts, "generated_artifacts", false).empty())
    out.generated_artifacts = answer.generated_artifacts;
  out.error_code = provider_protocol_error_code;
  out.error_detail = problem;
  return out;
}

step_result checked_answer(executor_step step, step_result r) {
  // In-process executors may leave these empty for "none".
  if (r.provider_refs.empty())
    r.provider_refs = "{}";
  if (r.generated_artifacts.empty())
    r.generated_artifacts = "[]";
  auto problem = answer_problem(step, r);
  if (problem.empty())
    return r;
  return protocol_violation(step, r, problem);
}

std::string storable_text(std::string_view s, size_t max_bytes) {
  static constexpr std::string_view replacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(std::min(s.size(), max_bytes));
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xE  ? 3
                 : (c >> 3) == 0x1E ? 4
                                    : 0;
    bool ok = len > 0 && c != 0 && i + len <= s.size();
    unsigned cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
    for (size_t k = 1; ok && k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      ok = (cc & 0xC0) == 0x80;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // No overlong forms, surrogates or code points past U+10FFFF.
    if (ok && len > 1)
      ok = !(len == 2 && cp < 0x80) && !(len == 3 && cp < 0x800) && !(len == 4 && cp < 0x10000) &&
           !(cp >= 0xD800 && cp <= 0xDFFF) && cp <= 0x10FFFF;
    auto piece = ok ? s.substr(i, len) : replacement;
    if (out.size() + piece.size() > max_bytes)
      break;
    out += piece;
    i += ok ? len : 1;
  }
  return out;
}

} // namespace mg::domain
