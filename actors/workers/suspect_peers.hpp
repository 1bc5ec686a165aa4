#pragma once
// Peers whose middleman connection dropped. SPEC §8: a lost connection only
// prompts an early look at the peer's lease — the lease alone decides it is
// dead — so the peer watch records the suspect here and wakes cluster_lease,
// which looks now and again the moment the suspect's lease runs out.
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace mg::workers {

class suspect_peers {
public:
  void add(const std::string& node) {
    std::lock_guard<std::mutex> lock(m_);
    names_.insert(node);
  }
  void remove(const std::string& node) {
    std::lock_guard<std::mutex> lock(m_);
    names_.erase(node);
  }
  std::vector<std::string> list() const {
    std::lock_guard<std::mutex> lock(m_);
    return {names_.begin(), names_.end()};
  }

private:
  mutable std::mutex m_;
  std::set<std::string> names_;
};

} // namespace mg::workers
