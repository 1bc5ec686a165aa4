#pragma once
// What a committed change to a request asks of this process's workers.
#include <optional>

namespace mg::domain {

struct request_change {
  /// The change's own transaction reconciled the request under its locks,
  /// so only the dispatchers wake (a second reconcile would find nothing to
  /// do, holding the request's lock meanwhile).
  bool reconciled = false;
  /// Nodes the change made READY, when it knows: one dispatcher wakes per
  /// node (none for none). Unknown: every dispatcher wakes.
  std::optional<int> ready_nodes;
};

} // namespace mg::domain
