#pragma once
// The cluster door's login limits (SPEC §8): failed logins are throttled
// per peer address, successful ones per key, and a key holds at most
// MG_CLUSTER_MAX_SESSIONS_PER_KEY live sessions. A flood of logins thus
// costs a bounded amount of work and spawns a bounded number of sessions.
#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>

namespace mg::actors {

/// Token buckets keyed by a string. Used by the movement_api actor alone
/// (one thread at a time), so not locked. Buckets start full; the table
/// forgets full buckets when it grows past `max_entries`, so peers cannot
/// make it grow without bound.
class login_buckets {
public:
  using clock = std::chrono::steady_clock;

  login_buckets(double burst, double per_second, size_t max_entries = 4096)
      : burst_(burst), rate_(per_second), max_entries_(max_entries) {}

  /// 0 when `key` has a token now (none is taken), else the whole seconds
  /// (>= 1) until it has one.
  int wait(const std::string& key, clock::time_point now = clock::now());
  /// Takes one token from `key`'s bucket (never below zero).
  void take(const std::string& key, clock::time_point now = clock::now());

private:
  struct bucket {
    double tokens;
    clock::time_point at;
  };
  bucket& refill(const std::string& key, clock::time_point now);

  double burst_;
  double rate_;
  size_t max_entries_;
  std::map<std::string, bucket> buckets_;
};

/// Live sessions per key. Sessions count themselves out when they end,
/// on whatever thread that happens, hence the lock.
class session_counter {
public:
  explicit session_counter(int max_per_key) : max_(max_per_key) {}

  /// Counts one more session for `key`; false (nothing counted) when it
  /// holds the maximum already.
  bool try_add(const std::string& key);
  void remove(const std::string& key);
  int live(const std::string& key) const;
  int max() const { return max_; }

private:
  int max_;
  mutable std::mutex mu_;
  std::map<std::string, int> live_;
};

} // namespace mg::actors
