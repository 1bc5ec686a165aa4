#pragma once
// How many malloc arenas the process keeps. glibc gives each thread that
// allocates an arena of its own, up to 8 per core, and an arena keeps what
// its thread freed: with the runtime's dozens of threads (workers, writers,
// CAF's scheduler) on 2 cores that is about 5 MiB of resident memory held
// for nothing (bench, median of 6 rounds: RSS after throughput 36.6 MiB
// with glibc's limit, 31.7 MiB with 2 arenas, at the same nodes/s).
#include <optional>

namespace mg::config {

/// The arena limit for a machine of `cores` cores: one per core, at least 2.
/// None when the environment sets MALLOC_ARENA_MAX (`env_value` not empty):
/// the operator's word wins.
std::optional<int> malloc_arena_limit(unsigned cores, const char* env_value);

/// Applies malloc_arena_limit for this machine and environment; call it
/// before the process starts threads. Answers the limit applied, if any.
std::optional<int> limit_malloc_arenas();

} // namespace mg::config
