#pragma once
// Reads this process's identity and looks up other pids in /proc (the I/O
// half of domain/process_identity).
#include <cstdint>

#include "domain/process_identity.hpp"

namespace mg::actors {

/// This process as cluster_nodes records it; a part that cannot be read
/// stays empty (the identity is then incomplete and proves nothing).
domain::process_identity this_process_identity();

/// `pid` in this process's /proc: no such process, a process and its stat,
/// or unknown (unreadable, malformed).
domain::pid_look look_up_pid(std::int64_t pid);

} // namespace mg::actors
