#include "domain/drift.hpp"

namespace mg::domain {

drift_step step_drift(drift_state previous, bool matches) {
  if (matches)
    return {drift_state::ok,
            previous == drift_state::drift ? drift_change::resolved : drift_change::none};
  // A first check that already disagrees is a detection too: nobody has
  // heard about it yet.
  return {drift_state::drift,
          previous == drift_state::drift ? drift_change::none : drift_change::detected};
}

std::string_view to_string(drift_state s) {
  switch (s) {
  case drift_state::ok:
    return "ok";
  case drift_state::drift:
    return "drift";
  default:
    return "unverified";
  }
}

std::optional<drift_state> parse_drift_state(std::string_view s) {
  if (s == "unverified")
    return drift_state::unverified;
  if (s == "ok")
    return drift_state::ok;
  if (s == "drift")
    return drift_state::drift;
  return std::nullopt;
}

} // namespace mg::domain
