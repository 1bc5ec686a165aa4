#include "domain/step_proof.hpp"

#include <cstdio>
#include <ctime>

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
  w.member("error_code", domain::storable_text(r.error_code))
      .member("error_detail", domain::storable_text(r.error_detail));
  if (r.answered_at)
    w.member("answered_at", utc_timestamp_text(*r.answered_at));
  return w.end_object().str();
}

} // namespace

std::string utc_timestamp_text(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  const auto since_epoch = duration_cast<microseconds>(t.time_since_epoch());
  auto seconds = duration_cast<std::chrono::seconds>(since_epoch);
  auto micros = since_epoch - seconds;
  if (micros.count() < 0) { // before 1970: floor, so the fraction stays positive
    seconds -= std::chrono::seconds(1);
    micros += std::chrono::seconds(1);
  }
  const std::time_t whole = static_cast<std::time_t>(seconds.count());
  std::tm utc{};
  gmtime_r(&whole, &utc);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &utc);
  char fraction[32];
  std::snprintf(fraction, sizeof fraction, ".%06lldZ", static_cast<long long>(micros.count()));
  return std::string(date) + fraction;
}

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
