#include "actors/cluster/login_limits.hpp"

#include <algorithm>
#include <cmath>

namespace mg::actors {

login_buckets::bucket& login_buckets::refill(const std::string& key, clock::time_point now) {
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (buckets_.size() >= max_entries_) {
      // Forget every bucket that has refilled: it behaves as a new one.
      for (auto i = buckets_.begin(); i != buckets_.end();) {
        double elapsed = std::chrono::duration<double>(now - i->second.at).count();
        if (i->second.tokens + elapsed * rate_ >= burst_)
          i = buckets_.erase(i);
        else
          ++i;
      }
    }
    it = buckets_.emplace(key, bucket{burst_, now}).first;
  }
  auto& b = it->second;
  double elapsed = std::chrono::duration<double>(now - b.at).count();
  if (elapsed > 0) {
    b.tokens = std::min(burst_, b.tokens + elapsed * rate_);
    b.at = now;
  }
  return b;
}

int login_buckets::wait(const std::string& key, clock::time_point now) {
  auto& b = refill(key, now);
  if (b.tokens >= 1)
    return 0;
  return std::max(1, static_cast<int>(std::ceil((1 - b.tokens) / rate_)));
}

void login_buckets::take(const std::string& key, clock::time_point now) {
  auto& b = refill(key, now);
  b.tokens = std::max(0.0, b.tokens - 1);
}

bool session_counter::try_add(const std::string& key) {
  std::lock_guard<std::mutex> g(mu_);
  auto& n = live_[key];
  if (n >= max_)
    return false;
  ++n;
  return true;
}

void session_counter::remove(const std::string& key) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = live_.find(key);
  if (it == live_.end())
    return;
  if (--it->second <= 0)
    live_.erase(it);
}

int session_counter::live(const std::string& key) const {
  std::lock_guard<std::mutex> g(mu_);
  auto it = live_.find(key);
  return it == live_.end() ? 0 : it->second;
}

} // namespace mg::actors
