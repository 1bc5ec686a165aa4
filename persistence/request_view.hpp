#pragma once
// Read side of the movement calls (SPEC §5): a movement as the API's JSON
// object, keyset-paginated lists of movements, and a request's timeline of
// events and audit rows. The JSON is built by PostgreSQL, so amounts and
// other JSON values leave the database exactly as stored (never floats).
#include <optional>
#include <pqxx/pqxx>
#include <string>

#include "domain/movement_requests.hpp"
#include "persistence/keyset_page.hpp"

namespace mg::db {

/// `{id, template_key, ..., nodes: [{node_key, ..., artifacts: {kind: count}}]}`
/// or nullopt when there is no such request.
std::optional<std::string> movement_json(pqxx::transaction_base& tx, const std::string& id);

/// Movements newest first, keyset on (created_at, id); `state` "" = any.
/// Items carry no nodes.
json_page list_movements(pqxx::transaction_base& tx, const std::string& state, int limit,
                         const std::optional<domain::list_cursor>& after);

/// The request's movement_events and audit rows (`subject` =
/// "movement:<id>"), oldest first, keyset on (occurred_at, id). Each item
/// has `kind` "event" or "audit".
json_page list_events(pqxx::transaction_base& tx, const std::string& request_id, int limit,
                      const std::optional<domain::list_cursor>& after);

bool request_exists(pqxx::transaction_base& tx, const std::string& id);

} // namespace mg::db
