#pragma once
// The audit outbox (SPEC §2, §5): every successful mutating call writes one
// row in its own transaction; audit_outbox_promoter copies each row to
// audit_events exactly once.
#include <pqxx/pqxx>
#include <string>

namespace mg::db {

/// Appends one audit_outbox row in `tx`. `detail_json` must be a JSON object.
void write_audit(pqxx::transaction_base& tx, const std::string& actor, const std::string& action,
                 const std::string& subject, const std::string& detail_json = "{}");

} // namespace mg::db
