#pragma once
// Per-key token buckets (SPEC §5: MG_API_RATE_LIMIT_PER_SECOND, burst 2x).
#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <string>

namespace mg::http {

class rate_limiter {
public:
  using clock = std::chrono::steady_clock;

  /// `rate` tokens per second, buckets hold `2 * rate` (and start full);
  /// a rate <= 0 limits nothing. A bucket holds at least one token.
  explicit rate_limiter(double rate) : rate_(rate), burst_(std::max(1.0, 2 * rate)) {}

  /// 0 when `key` may go ahead (one token taken), else the whole seconds
  /// (>= 1) until a token is back: the Retry-After value.
  int acquire(const std::string& key, clock::time_point now = clock::now());

private:
  struct bucket {
    double tokens;
    clock::time_point at;
  };
  double rate_;
  double burst_;
  std::mutex mutex_;
  std::map<std::string, bucket> buckets_;
};

} // namespace mg::http
