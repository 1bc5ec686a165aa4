#pragma once
// One worker's own connection, reopened after the database comes back.
#include <memory>
#include <pqxx/pqxx>
#include <string>

#include "persistence/db.hpp"

namespace mg::db {

class connection_slot {
public:
  explicit connection_slot(std::string url, plan_choice plans = plan_choice::automatic)
      : url_(std::move(url)), plans_(plans) {}

  /// The open connection, connecting first when there is none.
  pqxx::connection& get() {
    if (!conn_ || !conn_->is_open())
      conn_ = connect(url_, plans_);
    return *conn_;
  }
  /// Forget a connection that failed; the next get() reconnects.
  void reset() { conn_.reset(); }

private:
  std::string url_;
  plan_choice plans_;
  std::unique_ptr<pqxx::connection> conn_;
};

} // namespace mg::db
