// The process's malloc arena limit: one per core (at least 2) unless the
// operator sets MALLOC_ARENA_MAX; once applied, threads that start share
// the arenas there are instead of each making its own. The arenas are
// counted (malloc_info's heaps) in a forked child, whose limit is its own.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <malloc.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "config/malloc_arenas.hpp"

using mg::config::malloc_arena_limit;

namespace {

/// This process's arenas: the heaps malloc_info lists.
int arenas() {
  char* text = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&text, &size);
  malloc_info(0, out);
  std::fclose(out);
  const std::string info(text, size);
  std::free(text);
  int n = 0;
  for (auto at = info.find("<heap nr="); at != std::string::npos;
       at = info.find("<heap nr=", at + 1))
    ++n;
  return n;
}

struct arena_counts {
  int before = -1; // when the threads start
  int after = -1;  // when they have all allocated
};

/// The arenas of a forked child around `threads` threads that each
/// allocate while all of them are alive; the child first applies the
/// process's limit when `limited`.
arena_counts arenas_around_threads(bool limited, int threads) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0)
    return {};
  pid_t child = fork();
  if (child == 0) {
    if (limited)
      mg::config::limit_malloc_arenas();
    arena_counts counts;
    counts.before = arenas();
    std::atomic<int> allocated{0};
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i)
      pool.emplace_back([&] {
        void* p = std::malloc(256);
        ++allocated;
        while (allocated.load() < threads)
          std::this_thread::yield();
        std::free(p);
      });
    for (auto& t : pool)
      t.join();
    counts.after = arenas();
    _exit(write(pipe_fds[1], &counts, sizeof counts) == sizeof counts ? 0 : 1);
  }
  close(pipe_fds[1]);
  arena_counts counts;
  if (read(pipe_fds[0], &counts, sizeof counts) != sizeof counts)
    counts = {};
  close(pipe_fds[0]);
  waitpid(child, nullptr, 0);
  return counts;
}

} // namespace

BOOST_AUTO_TEST_SUITE(malloc_arenas)

BOOST_AUTO_TEST_CASE(one_arena_per_core_and_at_least_two) {
  BOOST_TEST(*malloc_arena_limit(1, nullptr) == 2);
  BOOST_TEST(*malloc_arena_limit(2, nullptr) == 2);
  BOOST_TEST(*malloc_arena_limit(16, nullptr) == 16);
  BOOST_TEST(*malloc_arena_limit(0, nullptr) == 2); // hardware_concurrency may not know
}

BOOST_AUTO_TEST_CASE(the_operators_malloc_arena_max_wins) {
  BOOST_TEST(!malloc_arena_limit(2, "8").has_value());
  BOOST_TEST(*malloc_arena_limit(2, "") == 2); // empty: glibc ignores it too
}

BOOST_AUTO_TEST_CASE(threads_started_after_the_limit_share_arenas) {
  if (std::getenv("MALLOC_ARENA_MAX"))
    return; // the operator's setting applies instead
  const int limit = *malloc_arena_limit(std::thread::hardware_concurrency(), nullptr);
  auto limited = arenas_around_threads(true, 8);
  BOOST_TEST(limited.before > 0);
  BOOST_TEST(limited.after <= std::max(limited.before, limit));
  // The control: with glibc's own limit (8 per core) threads make more.
  auto unlimited = arenas_around_threads(false, 8);
  if (unlimited.after <= limit)
    return; // a machine with that many cores: the limit changes nothing here
  BOOST_TEST(unlimited.after > limited.after);
}

BOOST_AUTO_TEST_SUITE_END()
