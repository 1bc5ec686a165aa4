#pragma once
// The supervision tree as the admin listener shows it.
#include <chrono>
#include <string>

#include "actors/runtime.hpp"

namespace mg::actors {

/// The supervisor's status (a JSON array of members); "[]" when it does
/// not answer within `timeout` (stopped, or not started).
std::string supervision_json(caf::actor_system& sys, const runtime& rt,
                             std::chrono::milliseconds timeout = std::chrono::seconds(1));

/// Every core member of `supervision` (supervision_json's output) is
/// running, and there is at least one.
bool core_group_running(const std::string& supervision);

/// The names of the members of `supervision` still running, comma-separated.
std::string running_members(const std::string& supervision);

} // namespace mg::actors
