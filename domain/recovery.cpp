#include "domain/recovery.hpp"

#include "domain/provider_answer.hpp"

namespace mg::domain {

namespace {

/// The recover call's answer was replaced by a protocol violation.
bool is_protocol_error(const recover_result& rr) {
  return rr.result.error_code == provider_protocol_error_code &&
         rr.result.next_state == node_state::unknown;
}

} // namespace

recover_decision decide_recover(const recover_result& rr, int attempt_no,
                                const std::string& error_code_before) {
  recover_decision d;
  const auto& r = rr.result;
  if (is_protocol_error(rr)) {
    // UNKNOWN, settled at once: an operator must look (SPEC §4).
    d.next_state = node_state::unknown;
    d.take_answer = true;
    return d;
  }
  switch (rr.outcome) {
  case recover_outcome::found:
    d.next_state = r.next_state.value_or(node_state::unknown);
    d.take_answer = true;
    d.observe_now = d.next_state == node_state::submitted || d.next_state == node_state::observing;
    break;
  case recover_outcome::fenced:
    d.next_state = node_state::ready;
    d.error_detail = "attempt " + std::to_string(attempt_no) + " fenced by recovery";
    d.clear_claim = true;
    break;
  case recover_outcome::still_unknown:
    d.next_state = node_state::unknown;
    d.error_code = error_code_before.empty() ? "RECOVERY_PENDING" : error_code_before;
    d.error_detail = r.error_detail;
    break;
  }
  return d;
}

const char* recover_outcome_name(recover_outcome o) {
  return o == recover_outcome::found    ? "found"
         : o == recover_outcome::fenced ? "fenced"
                                        : "still_unknown";
}

} // namespace mg::domain
