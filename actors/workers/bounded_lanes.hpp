#pragma once
// Runs independent blocking calls (RPC lanes) at most `concurrency` at a
// time, each with a hard deadline. A lane still running at its deadline is
// abandoned: its thread finishes on its own (it owns everything it uses)
// and its late answer is dropped, so a peer that trickles bytes can delay a
// pass by one deadline at most, never hang it.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace mg::workers {

/// results[i] is task i's answer, or nullopt when it missed its deadline.
template <class R>
std::vector<std::optional<R>> run_bounded_lanes(std::vector<std::function<R()>> tasks,
                                                int concurrency,
                                                std::chrono::milliseconds deadline) {
  struct shared {
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::optional<R>> results;
    std::vector<bool> done;
    std::vector<bool> abandoned; // missed its deadline: its answer is dropped
    bool closed = false;         // the caller has left: late answers are dropped
  };
  using clock = std::chrono::steady_clock;
  auto st = std::make_shared<shared>();
  st->results.resize(tasks.size());
  st->done.assign(tasks.size(), false);
  st->abandoned.assign(tasks.size(), false);
  std::vector<std::pair<size_t, clock::time_point>> active; // index, deadline
  size_t next = 0;
  std::unique_lock<std::mutex> lock(st->m);
  while (next < tasks.size() || !active.empty()) {
    while (static_cast<int>(active.size()) < std::max(concurrency, 1) && next < tasks.size()) {
      size_t i = next++;
      active.emplace_back(i, clock::now() + deadline);
      std::thread([st, i, task = std::move(tasks[i])] {
        std::optional<R> r;
        try {
          r = task();
        } catch (...) {
          // Tasks report their own errors; anything else counts as no answer.
        }
        std::lock_guard<std::mutex> g(st->m);
        if (st->closed || st->abandoned[i])
          return;
        st->results[i] = std::move(r);
        st->done[i] = true;
        st->cv.notify_all();
      }).detach();
    }
    auto earliest = active.front().second;
    for (auto& a : active)
      earliest = std::min(earliest, a.second);
    st->cv.wait_until(lock, earliest, [&] {
      for (auto& a : active)
        if (st->done[a.first])
          return true;
      return false;
    });
    auto now = clock::now();
    std::vector<std::pair<size_t, clock::time_point>> still;
    for (auto& a : active) {
      if (st->done[a.first])
        continue;
      if (now < a.second)
        still.push_back(a);
      else
        st->abandoned[a.first] = true;
    }
    active.swap(still);
  }
  st->closed = true;
  return st->results;
}

/// Names a failed call that ran into its socket timeout as a timeout (the
/// HTTP client only says "Read" or "Connection"), so operators see why.
inline std::string label_timeout(const std::string& error,
                                 std::chrono::steady_clock::time_point started,
                                 double timeout_seconds) {
  auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (took < timeout_seconds * 0.9)
    return error;
  char buf[64];
  std::snprintf(buf, sizeof buf, "timeout after %g s: ", timeout_seconds);
  return buf + error;
}

} // namespace mg::workers
