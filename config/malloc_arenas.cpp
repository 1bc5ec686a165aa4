#include "config/malloc_arenas.hpp"

#include <algorithm>
#include <cstdlib>
#include <malloc.h>
#include <thread>

namespace mg::config {

std::optional<int> malloc_arena_limit(unsigned cores, const char* env_value) {
  if (env_value && *env_value)
    return std::nullopt;
  return static_cast<int>(std::max(2u, cores));
}

std::optional<int> limit_malloc_arenas() {
  auto limit =
      malloc_arena_limit(std::thread::hardware_concurrency(), std::getenv("MALLOC_ARENA_MAX"));
  if (limit && mallopt(M_ARENA_MAX, *limit) != 1)
    return std::nullopt;
  return limit;
}

} // namespace mg::config
