#include "persistence/audit_store.hpp"

#include "persistence/db.hpp"

namespace mg::db {

void write_audit(pqxx::transaction_base& tx, const std::string& actor, const std::string& action,
                 const std::string& subject, const std::string& detail_json) {
  static const statement insert{
      "mg_audit_insert",
      "INSERT INTO audit_outbox (actor, action, subject, detail) VALUES ($1, $2, $3, $4::jsonb)"};
  exec(tx, insert, actor, action, subject, detail_json);
}

} // namespace mg::db
