#pragma once
// The life cycle of a registry drift subject (a code-hash baseline, a
// chain's id, a CCIP registry entry): each decided check moves it, and only
// the two edges — into drift and out of it — are facts an operator hears.
#include <optional>
#include <string_view>

namespace mg::domain {

enum class drift_state { unverified, ok, drift };

enum class drift_change {
  none,     // same verdict as before
  detected, // entered drift: a new episode, one registry_drift notification
  resolved, // left drift: one registry_drift_resolved notification
};

struct drift_step {
  drift_state next;
  drift_change change;
};

/// The next state after a check that matched (`matches`) or not.
drift_step step_drift(drift_state previous, bool matches);

std::string_view to_string(drift_state s);
std::optional<drift_state> parse_drift_state(std::string_view s);

} // namespace mg::domain
