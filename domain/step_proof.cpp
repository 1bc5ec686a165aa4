#include "domain/step_proof.hpp"

#include "domain/json_writer.hpp"
#include "domain/provider_answer.hpp"
#include "domain/recovery.hpp"

namespace mg::domain {

namespace {

/// Writes the members after next_state and closes the object; strings are
/// clipped to what the database keeps.
std::string with_answer_members(json::writer& w, const step_result& r) {
  w.member("provider_state", domain::storable_text(r.provider_state))
      .key("provider_refs")
      .raw(r.provider_refs.empty() ? "{}" : r.provider_refs)
      .member("provider_ref_id", domain::storable_text(r.provider_ref_id))
      .key("retry_after_seconds");
  if (r.retry_after_seconds)
    w.number(*r.retry_after_seconds);
  else
    w.null();
  return w.member("error_code", domain::storable_text(r.error_code))
      .member("error_detail", domain::storable_text(r.error_detail))
      .end_object()
      .str();
}

} // namespace

std::string step_proof_json(const step_result& r) {
  json::writer w;
  w.begin_object().member("next_state", r.next_state ? domain::to_string(*r.next_state) : "");
  return with_answer_members(w, r);
}

std::string recover_proof_json(recover_outcome outcome, node_state led_to, const step_result& r) {
  json::writer w;
  w.begin_object()
      .member("outcome", recover_outcome_name(outcome))
      .member("next_state", domain::to_string(led_to));
  return with_answer_members(w, r);
}

} // namespace mg::domain
