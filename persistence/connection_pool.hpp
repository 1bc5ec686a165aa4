#pragma once
// A small bounded pool of connections for short, blocking calls made from
// several threads (the sim ledger, the API). Never one connection per
// request: PostgreSQL allows 100 by default.
#include <condition_variable>
#include <memory>
#include <mutex>
#include <pqxx/pqxx>
#include <string>
#include <vector>

namespace mg::db {

class connection_pool {
public:
  connection_pool(std::string url, size_t max_size) : url_(std::move(url)), max_(max_size) {}

  class lease {
  public:
    lease(connection_pool& pool, std::unique_ptr<pqxx::connection> c)
        : pool_(&pool), conn_(std::move(c)) {}
    lease(lease&&) = default;
    ~lease() {
      if (conn_)
        pool_->give_back(std::move(conn_));
    }
    pqxx::connection& operator*() { return *conn_; }
    pqxx::connection* operator->() { return conn_.get(); }
    /// Drops the connection instead of returning it (after a broken link).
    void discard() {
      conn_.reset();
      pool_->forget();
    }

  private:
    connection_pool* pool_;
    std::unique_ptr<pqxx::connection> conn_;
  };

  /// Blocks while every connection is lent out.
  lease acquire();

  /// Connections lent out, idle and the bound (read-only; for /metrics).
  struct usage {
    size_t in_use = 0;
    size_t idle = 0;
    size_t max = 0;
  };
  usage current_usage() {
    std::lock_guard<std::mutex> lock(mutex_);
    return {open_ - idle_.size(), idle_.size(), max_};
  }

private:
  void give_back(std::unique_ptr<pqxx::connection> c);
  void forget();

  std::string url_;
  size_t max_;
  size_t open_ = 0;
  std::mutex mutex_;
  std::condition_variable available_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_;
};

} // namespace mg::db
