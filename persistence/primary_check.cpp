#include "persistence/primary_check.hpp"

namespace mg::db {

bool accepts_writes(pqxx::connection& c) {
  pqxx::nontransaction tx(c);
  auto r = tx.exec(
      "SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off'");
  return r[0][0].as<bool>();
}

} // namespace mg::db
