#include "persistence/connection_pool.hpp"

#include "persistence/db.hpp"

namespace mg::db {

connection_pool::lease connection_pool::acquire() {
  std::unique_lock<std::mutex> lock(mutex_);
  available_.wait(lock, [&] { return !idle_.empty() || open_ < max_; });
  if (!idle_.empty()) {
    auto c = std::move(idle_.back());
    idle_.pop_back();
    return lease(*this, std::move(c));
  }
  ++open_;
  lock.unlock();
  try {
    return lease(*this, connect(url_));
  } catch (...) {
    forget();
    throw;
  }
}

void connection_pool::give_back(std::unique_ptr<pqxx::connection> c) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (c->is_open())
    idle_.push_back(std::move(c));
  else
    --open_;
  available_.notify_one();
}

void connection_pool::forget() {
  std::lock_guard<std::mutex> lock(mutex_);
  --open_;
  available_.notify_one();
}

} // namespace mg::db
