#include "http/rate_limiter.hpp"

#include <algorithm>
#include <cmath>

namespace mg::http {

int rate_limiter::acquire(const std::string& key, clock::time_point now) {
  if (rate_ <= 0) // no limit configured
    return 0;
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, fresh] = buckets_.try_emplace(key, bucket{burst_, now});
  bucket& b = it->second;
  if (!fresh) {
    double elapsed = std::chrono::duration<double>(now - b.at).count();
    b.tokens = std::min(burst_, b.tokens + std::max(0.0, elapsed) * rate_);
    b.at = std::max(b.at, now);
  }
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return 0;
  }
  return std::max(1, static_cast<int>(std::ceil((1 - b.tokens) / rate_)));
}

} // namespace mg::http
