#pragma once
// Connection handling and small conversions shared by the repositories.
#include <memory>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "domain/states.hpp"

namespace mg::db {

/// Opens a connection; the URL is never logged (it may carry a password).
std::unique_ptr<pqxx::connection> connect(const std::string& url);

/// How a connection's prepared statements are planned.
enum class plan_choice {
  /// PostgreSQL's default: re-planned for each execution's parameters
  /// until a generic plan looks as cheap.
  automatic,
  /// One generic plan per statement, made at its first execution. For the
  /// engine's loops, which run a few statements thousands of times a
  /// second, each keyed by primary keys, partial indexes or ANY(ids): there
  /// re-planning costs several times the execution.
  generic,
};

/// Opens a connection whose prepared statements are planned as `plans` says.
std::unique_ptr<pqxx::connection> connect(const std::string& url, plan_choice plans);

/// `url` with application_name set, so pg_stat_activity shows which worker
/// holds a connection. Works for URI and key=value connection strings.
std::string with_application_name(const std::string& url, const std::string& name);

/// The application_name of this process's API connections:
/// "movegate:api:<pid>-<random>", unique to the process. A dispatch NOTIFY
/// carries its sender's application_name as payload, so this process's
/// listener can pass over what its own API sent (it wakes its dispatchers
/// itself, one per node made READY).
const std::string& api_application_name();

/// A text[] literal ("{a,b}") for `$n::text[]` parameters.
std::string text_array(const std::vector<std::string>& items);
/// A PostgreSQL array literal whose absent items are NULL.
std::string nullable_text_array(const std::vector<std::optional<std::string>>& items);

/// Parses a JSON array of strings (as produced by `to_json(text[])`).
std::vector<std::string> json_string_array(const std::string& json_text);

/// nullptr (SQL NULL) for an empty string, else its characters.
inline const char* null_if_empty(const std::string& s) {
  return s.empty() ? nullptr : s.c_str();
}

/// Field as string; "" when NULL.
inline std::string str(const pqxx::field& f) {
  return f.is_null() ? std::string() : f.c_str();
}

/// The state a node_state column's text names; throws std::runtime_error
/// naming `column` for any other text, so a corrupt row is never taken for
/// some state.
domain::node_state node_state_of(std::string_view text, std::string_view column);
/// The same for a request_state column.
domain::request_state request_state_of(std::string_view text, std::string_view column);

inline domain::node_state node_state_of(const pqxx::field& f) {
  return node_state_of(f.c_str(), f.name());
}
inline domain::request_state request_state_of(const pqxx::field& f) {
  return request_state_of(f.c_str(), f.name());
}

/// A statement prepared on each connection at its first use there (saves
/// the parse and plan of every hot query).
struct statement {
  std::string name;
  std::string sql;
};

template <class... Args>
pqxx::result exec(pqxx::transaction_base& tx, const statement& s, Args&&... args) {
  // Registering the same definition again is a no-op for libpqxx.
  tx.conn().prepare(s.name, s.sql);
  return tx.exec_prepared(s.name, std::forward<Args>(args)...);
}

/// Prepared statements sent to the server in one round trip: one
/// simple-query message of SQL EXECUTEs, so the writes that end a
/// transaction cost one round trip instead of one each, and keep their
/// cached plans. Arguments become quoted literals (coerced to the
/// statement's parameter types). The statements run in order; the first
/// error stops the rest and aborts the transaction, as separate calls would.
class write_batch {
public:
  template <class... Args>
  void add(pqxx::transaction_base& tx, const statement& s, const Args&... args) {
    tx.conn().prepare(s.name, s.sql);
    tx.conn().prepare_now(s.name); // EXECUTE needs it on the server
    std::string params;
    (append_literal(tx, params, args), ...);
    sql_ += "EXECUTE " + s.name + (params.empty() ? "" : "(" + params + ")") + ";";
  }
  bool empty() const { return sql_.empty(); }
  /// Runs the added statements and forgets them; answers the last one's rows.
  pqxx::result run(pqxx::transaction_base& tx);

private:
  static void append_literal(pqxx::transaction_base& tx, std::string& out, const std::string& v);
  static void append_literal(pqxx::transaction_base& tx, std::string& out, const char* v);
  static void append_literal(pqxx::transaction_base& tx, std::string& out, bool v);
  static void append_literal(pqxx::transaction_base& tx, std::string& out, int v);
  static void append_literal(pqxx::transaction_base& tx, std::string& out, long v);
  static void append_literal(pqxx::transaction_base& tx, std::string& out, double v);
  std::string sql_;
};

/// True for errors after which the connection must be replaced.
bool is_connection_error(const std::exception& e);

/// True when the server refused a value a statement carried (SQLSTATE
/// class 22: a malformed time, a number out of range, …).
bool is_refused_value(const std::exception& e);

} // namespace mg::db
