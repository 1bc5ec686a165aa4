#include "actors/workers/step_proof.hpp"

#include <cmath>
#include <cstdio>

#include "domain/json.hpp"
#include "domain/provider_answer.hpp"

namespace mg::workers {

namespace {

std::string text(const std::string& s) {
  return json::quote(domain::storable_text(s));
}

/// The members after next_state, each preceded by a comma.
std::string answer_members(const domain::step_result& r) {
  std::string out = ",\"provider_state\":" + text(r.provider_state) +
                    ",\"provider_refs\":" + (r.provider_refs.empty() ? "{}" : r.provider_refs) +
                    ",\"provider_ref_id\":" + text(r.provider_ref_id) + ",\"retry_after_seconds\":";
  if (r.retry_after_seconds && std::isfinite(*r.retry_after_seconds)) {
    char number[32];
    std::snprintf(number, sizeof number, "%.17g", *r.retry_after_seconds);
    out += number;
  } else {
    out += "null";
  }
  return out + ",\"error_code\":" + text(r.error_code) +
         ",\"error_detail\":" + text(r.error_detail);
}

} // namespace

std::string step_proof_json(const domain::step_result& r) {
  return "{\"next_state\":" +
         json::quote(r.next_state ? std::string(domain::to_string(*r.next_state)) : "") +
         answer_members(r) + "}";
}

std::string recover_proof_json(domain::recover_outcome outcome, domain::node_state led_to,
                               const domain::step_result& r) {
  const char* name = outcome == domain::recover_outcome::found    ? "found"
                     : outcome == domain::recover_outcome::fenced ? "fenced"
                                                                  : "still_unknown";
  return "{\"outcome\":" + json::quote(name) +
         ",\"next_state\":" + json::quote(std::string(domain::to_string(led_to))) +
         answer_members(r) + "}";
}

} // namespace mg::workers
