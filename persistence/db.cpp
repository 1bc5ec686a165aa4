#include "persistence/db.hpp"

#include "domain/json.hpp"

namespace mg::db {

std::unique_ptr<pqxx::connection> connect(const std::string& url) {
  return std::make_unique<pqxx::connection>(url);
}

std::string with_application_name(const std::string& url, const std::string& name) {
  bool uri = url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0;
  if (uri)
    return url + (url.find('?') == std::string::npos ? "?" : "&") + "application_name=" + name;
  return url + " application_name='" + name + "'";
}

std::string text_array(const std::vector<std::string>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\')
        out += '\\';
      out += c;
    }
    out += '"';
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

bool is_connection_error(const std::exception& e) {
  return dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr ||
         dynamic_cast<const pqxx::in_doubt_error*>(&e) != nullptr;
}

} // namespace mg::db
