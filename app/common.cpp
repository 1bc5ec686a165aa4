#include "app/common.hpp"
#include "build_paths.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "config/log.hpp"
#include "config/shipped_files.hpp"
#include "persistence/db.hpp"
#include "persistence/template_store.hpp"
#include "persistence/transaction.hpp"

namespace mg::app {

config::settings load_settings_or_exit() {
  try {
    auto s = config::load_settings(config::process_env());
    if (s.database_url.empty())
      throw config::config_error("MG_DATABASE_URL: is required (a PostgreSQL connection URL)");
    log::level l;
    if (log::parse_level(s.log_level, l))
      log::set_level(l);
    log::set_runtime_node(s.runtime_node);
    return s;
  } catch (const config::config_error& e) {
    std::cerr << "movegate: invalid configuration: " << e.what() << "\n";
    std::exit(2);
  }
}

std::string default_templates_dir() {
  return config::shipped_dir("MG_TEMPLATES_DIR", "templates", MG_SOURCE_DIR "/templates");
}

int load_templates(const std::string& database_url, const std::string& dir, bool verbose) {
  auto conn = db::connect(database_url);
  std::vector<std::filesystem::path> files;
  for (auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  int inserted = 0;
  for (auto& f : files) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    auto r = db::committed(
        *conn, [&](pqxx::transaction_base& tx) { return db::save_template(tx, ss.str()); });
    switch (r.outcome) {
    case db::save_outcome::inserted:
      ++inserted;
      if (verbose)
        std::cout << "loaded   " << r.template_key << " v" << r.version << "\n";
      break;
    case db::save_outcome::unchanged:
      if (verbose)
        std::cout << "present  " << r.template_key << " v" << r.version << "\n";
      break;
    case db::save_outcome::conflict:
      throw std::runtime_error(f.string() + ": " + r.template_key + " v" +
                               std::to_string(r.version) + " already exists with a different plan");
    case db::save_outcome::invalid: {
      std::string msg = f.string() + ": plan refused:";
      for (auto& e : r.errors)
        msg += "\n  " + e.field + ": " + e.message;
      throw std::runtime_error(msg);
    }
    }
  }
  return inserted;
}

std::string create_and_approve(pqxx::connection& c, actors::runtime& rt, db::create_params p) {
  auto id = db::committed(c, [&](pqxx::transaction_base& tx) {
    return db::create_request(tx, rt.plans(), p, rt.settings().callback_max_attempts).id;
  });
  auto approved = db::committed(c, [&](pqxx::transaction_base& tx) {
    return db::approve_request(tx, rt.plans(), id, "demo-approver",
                               rt.engine().reconcile_settings());
  });
  if (approved.status != db::approve_status::approved)
    throw std::runtime_error("approval of " + id + " refused");
  rt.notify_changed(id, {true, approved.reconciled.activated});
  return id;
}

std::string flag(const args& a, const std::string& name, const std::string& fallback) {
  for (size_t i = 0; i + 1 < a.size(); ++i)
    if (a[i] == name)
      return a[i + 1];
  return fallback;
}

bool has_flag(const args& a, const std::string& name) {
  return std::find(a.begin(), a.end(), name) != a.end();
}

} // namespace mg::app
