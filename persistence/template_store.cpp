#include "persistence/template_store.hpp"

#include <stdexcept>

#include "domain/json.hpp"
#include "persistence/db.hpp"

namespace mg::db {

save_result save_template(pqxx::transaction_base& tx, const std::string& plan_json) {
  save_result out;
  auto compiled = domain::compile_plan(plan_json);
  if (!compiled.compiled) {
    out.errors = std::move(compiled.errors);
    return out;
  }
  auto& p = *compiled.compiled;
  out.template_key = p.template_key;
  out.version = p.version;
  auto existing = tx.exec_params(
      "SELECT graph_hash, plan::text FROM templates WHERE template_key = $1 AND version = $2",
      p.template_key, p.version);
  auto canonical = json::canonical(json::parse_trusted(plan_json, "template"));
  if (!existing.empty()) {
    auto stored = json::canonical(json::parse_trusted(existing[0][1].c_str(), "templates.plan"));
    out.outcome = stored == canonical ? save_outcome::unchanged : save_outcome::conflict;
    return out;
  }
  tx.exec_params("INSERT INTO templates (template_key, version, graph_hash, plan, risk_controls)"
                 " VALUES ($1, $2, $3, $4::jsonb, $5::jsonb)",
                 p.template_key, p.version, compiled.graph_hash, canonical, p.risk_controls_json);
  for (auto& [from, to] : p.edges)
    tx.exec_params("INSERT INTO template_edges (template_key, version, from_key, to_key)"
                   " VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                   p.template_key, p.version, from, to);
  out.outcome = save_outcome::inserted;
  return out;
}

int latest_template_version(pqxx::transaction_base& tx, const std::string& key) {
  auto r = tx.exec_params("SELECT max(version) FROM templates WHERE template_key = $1", key);
  return r[0][0].is_null() ? 0 : r[0][0].as<int>();
}

std::shared_ptr<const stored_plan> plan_cache::get(pqxx::transaction_base& tx,
                                                   const std::string& key, int version) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = plans_.find({key, version});
    if (it != plans_.end())
      return it->second;
  }
  auto r = tx.exec_params("SELECT plan::text FROM templates WHERE template_key = $1"
                          " AND version = $2",
                          key, version);
  if (r.empty())
    throw std::runtime_error("template " + key + " v" + std::to_string(version) + " not found");
  auto compiled = domain::compile_plan(r[0][0].c_str());
  if (!compiled.compiled)
    throw std::runtime_error("stored template " + key + " v" + std::to_string(version) +
                             " no longer compiles");
  auto entry = std::make_shared<stored_plan>(
      stored_plan{std::move(*compiled.compiled), std::move(compiled.graph_hash)});
  std::lock_guard<std::mutex> lock(mutex_);
  return plans_.emplace(std::make_pair(key, version), entry).first->second;
}

std::optional<std::string> template_max_amount(pqxx::transaction_base& tx,
                                               const std::string& template_key, int version) {
  static const statement q{"mg_template_max_amount",
                           "SELECT COALESCE(risk_controls ->> 'max_amount', '') FROM templates"
                           " WHERE template_key = $1 AND version = $2"};
  auto r = exec(tx, q, template_key, version);
  if (r.empty())
    return std::nullopt;
  return std::string(r[0][0].c_str());
}

std::string template_asset(pqxx::transaction_base& tx, const std::string& template_key,
                           int version) {
  static const statement q{"mg_template_asset",
                           "SELECT COALESCE(risk_controls ->> 'asset', '') FROM templates"
                           " WHERE template_key = $1 AND version = $2"};
  auto r = exec(tx, q, template_key, version);
  return r.empty() ? std::string() : std::string(r[0][0].c_str());
}

} // namespace mg::db
