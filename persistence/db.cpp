#include "persistence/db.hpp"

#include <cstdio>
#include <random>
#include <stdexcept>
#include <typeinfo>
#include <unistd.h>

#include "domain/json.hpp"

namespace mg::db {

std::unique_ptr<pqxx::connection> connect(const std::string& url) {
  auto c = std::make_unique<pqxx::connection>(url);
  // libpqxx 6 would otherwise reconnect a broken connection by itself on its
  // next use, under whoever holds it, replaying LISTENs and prepared
  // statements on what may be another server after a failover. A broken
  // connection stays broken instead: its owner sees the connection error
  // and replaces it (connection_slot::reset, connection_pool's discard).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  c->inhibit_reactivation(true);
#pragma GCC diagnostic pop
  return c;
}

std::unique_ptr<pqxx::connection> connect(const std::string& url, plan_choice plans) {
  auto c = connect(url);
  if (plans == plan_choice::generic) {
    pqxx::nontransaction tx(*c);
    tx.exec0("SET plan_cache_mode = force_generic_plan");
  }
  return c;
}

std::string with_application_name(const std::string& url, const std::string& name) {
  bool uri = url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0;
  if (uri)
    return url + (url.find('?') == std::string::npos ? "?" : "&") + "application_name=" + name;
  return url + " application_name='" + name + "'";
}

const std::string& api_application_name() {
  static const std::string name = [] {
    std::random_device rd;
    char tag[9];
    std::snprintf(tag, sizeof tag, "%08x", static_cast<unsigned>(rd()));
    return "movegate:api:" + std::to_string(::getpid()) + "-" + tag;
  }();
  return name;
}

namespace {

void append_array_item(std::string& out, const std::string& item) {
  out += '"';
  for (char c : item) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  out += '"';
}

[[noreturn]] void not_a_state(std::string_view text, std::string_view column) {
  throw std::runtime_error(std::string(column) + " holds no known state: '" + std::string(text) +
                           "'");
}

} // namespace

domain::node_state node_state_of(std::string_view text, std::string_view column) {
  if (auto s = domain::parse_node_state(text))
    return *s;
  not_a_state(text, column);
}

domain::request_state request_state_of(std::string_view text, std::string_view column) {
  if (auto s = domain::parse_request_state(text))
    return *s;
  not_a_state(text, column);
}

std::string text_array(const std::vector<std::string>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += ',';
    append_array_item(out, items[i]);
  }
  out += '}';
  return out;
}

std::string nullable_text_array(const std::vector<std::optional<std::string>>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += ',';
    if (items[i])
      append_array_item(out, *items[i]);
    else
      out += "NULL";
  }
  out += '}';
  return out;
}

std::vector<std::string> json_string_array(const std::string& json_text) {
  std::vector<std::string> out;
  auto d = json::parse(json_text);
  if (!d || !d->IsArray())
    return out;
  for (auto& v : d->GetArray())
    if (v.IsString())
      out.emplace_back(v.GetString(), v.GetStringLength());
  return out;
}

pqxx::result write_batch::run(pqxx::transaction_base& tx) {
  std::string sql;
  sql.swap(sql_);
  return tx.exec(sql);
}

void write_batch::append_literal(pqxx::transaction_base& tx, std::string& out,
                                 const std::string& v) {
  out += out.empty() ? "" : ", ";
  out += tx.quote(v);
}

void write_batch::append_literal(pqxx::transaction_base& tx, std::string& out, const char* v) {
  if (!v) {
    out += out.empty() ? "NULL" : ", NULL";
    return;
  }
  append_literal(tx, out, std::string(v));
}

void write_batch::append_literal(pqxx::transaction_base& tx, std::string& out, bool v) {
  append_literal(tx, out, std::string(v ? "true" : "false"));
}

void write_batch::append_literal(pqxx::transaction_base& tx, std::string& out, int v) {
  append_literal(tx, out, std::to_string(v));
}

void write_batch::append_literal(pqxx::transaction_base& tx, std::string& out, long v) {
  append_literal(tx, out, std::to_string(v));
}

void write_batch::append_literal(pqxx::transaction_base& tx, std::string& out, double v) {
  append_literal(tx, out, pqxx::to_string(v)); // round-trips, unlike std::to_string
}

bool is_refused_value(const std::exception& e) {
  return dynamic_cast<const pqxx::data_exception*>(&e) != nullptr;
}

bool is_connection_error(const std::exception& e) {
  if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr ||
      dynamic_cast<const pqxx::in_doubt_error*>(&e) != nullptr)
    return true;
  // libpqxx's own failures that are no server error ("Could not obtain
  // client encoding" from a session that lost its server) leave the
  // connection in no known state: only a new one is safe.
  if (typeid(e) == typeid(pqxx::failure))
    return true;
  auto* sql = dynamic_cast<const pqxx::sql_error*>(&e);
  if (sql == nullptr)
    return false;
  // What a failover looks like from a session that outlived its primary:
  // the server demoted to a read-only standby (25006), shut down by its
  // supervisor (57P01), or still starting or recovering (57P03). Only a new
  // connection, to whichever server is primary now, can cure them.
  const std::string& state = sql->sqlstate();
  return state == "25006" || state == "57P01" || state == "57P03" || state.rfind("08", 0) == 0;
}

} // namespace mg::db
