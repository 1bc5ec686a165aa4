#pragma once
// Small readers and template builders shared by the database tests.
#include <string>

#include "persistence/db.hpp"
#include "tests/support/db_fixture.hpp"

namespace mg::test {

/// A one-node template (node "a", executor "sim"); `extra` is spliced into
/// the node object.
inline std::string one_node(const std::string& key,
                            const std::string& action_type = "chain_transfer",
                            const std::string& extra = "") {
  return R"({"template_key": ")" + key + R"(", "version": 1, "nodes": [{"node_key": "a",)" +
         R"( "action_type": ")" + action_type + R"(", "executor_key": "sim")" +
         (extra.empty() ? "" : ", " + extra) + "}]}";
}

inline std::string node_id(db_fixture& f, const std::string& request_id,
                           const std::string& node_key = "a") {
  return f.scalar("SELECT id FROM movement_request_nodes WHERE request_id = '" + request_id +
                  "' AND node_key = '" + node_key + "'");
}

inline std::string node_col(db_fixture& f, const std::string& id, const std::string& column) {
  return f.scalar("SELECT " + column + " FROM movement_request_nodes WHERE id = '" + id + "'");
}

inline std::string request_col(db_fixture& f, const std::string& id, const std::string& column) {
  return f.scalar("SELECT " + column + " FROM movement_requests WHERE id = '" + id + "'");
}

/// True when `sql` (a FOR UPDATE NOWAIT) gets its lock on a fresh connection.
inline bool lock_is_free(const std::string& url, const std::string& sql) {
  auto c = db::connect(url);
  pqxx::work t(*c);
  try {
    t.exec(sql);
    return true;
  } catch (const pqxx::sql_error& e) {
    BOOST_TEST_MESSAGE("NOWAIT refused: " << e.what());
    return false;
  }
}

} // namespace mg::test
