#pragma once
// What an executor.recover answer makes of an UNKNOWN or stranded node
// (SPEC §1 recovery): one mapping for the node_recovery worker and the
// operator's retry of an UNKNOWN node.
#include <string>

#include "domain/executor.hpp"

namespace mg::domain {

struct recover_decision {
  node_state next_state = node_state::unknown;
  /// The answer's provider state, refs, ref id and error are stored with
  /// the node (error_code and error_detail below are then unused).
  bool take_answer = false;
  /// Back to the observer at once (a found SUBMITTED or OBSERVING attempt).
  bool observe_now = false;
  /// The claim token is cleared (a fenced attempt leaves no claim), else
  /// rotated: either way a late result of the attempt's dispatcher no
  /// longer matches.
  bool clear_claim = false;
  std::string error_code;
  std::string error_detail;
};

/// `attempt_no` and `error_code_before` are the node's as it was read.
recover_decision decide_recover(const recover_result& rr, int attempt_no,
                                const std::string& error_code_before);

/// "found", "fenced" or "still_unknown".
const char* recover_outcome_name(recover_outcome o);

} // namespace mg::domain
