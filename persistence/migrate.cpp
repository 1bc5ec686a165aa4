#include "persistence/migrate.hpp"
#include "build_paths.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "config/shipped_files.hpp"
#include "persistence/db.hpp"

namespace mg::db {

namespace {

// Any constant shared by every movegate process.
constexpr long long migration_lock_key = 0x6d6f766567617465; // "movegate"

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

std::vector<migration> load_migrations(const std::string& dir) {
  std::vector<migration> out;
  for (auto& entry : std::filesystem::directory_iterator(dir)) {
    auto name = entry.path().filename().string();
    if (entry.path().extension() != ".sql" || name.size() < 6 || !std::isdigit(name[0]))
      continue;
    out.push_back({std::stoi(name.substr(0, name.find('_'))), name, read_file(entry.path())});
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.version < b.version; });
  for (size_t i = 1; i < out.size(); ++i)
    if (out[i].version == out[i - 1].version)
      throw std::runtime_error("two migrations with version " + std::to_string(out[i].version));
  return out;
}

std::string migrations_dir() {
  return config::shipped_dir("MG_MIGRATIONS_DIR", "migrations", MG_MIGRATIONS_DIR);
}

std::vector<migration> bundled_migrations() {
  return load_migrations(migrations_dir());
}

int migrate(const std::string& database_url, const std::vector<migration>& migrations,
            const std::function<void(const std::string&)>& progress) {
  auto conn = connect(database_url);
  pqxx::nontransaction setup(*conn);
  // Session-level lock: a second process waits here, then finds nothing to do.
  setup.exec("SELECT pg_advisory_lock(" + std::to_string(migration_lock_key) + ")");
  setup.exec("SET client_min_messages = warning");
  setup.exec("CREATE TABLE IF NOT EXISTS schema_migrations ("
             " version integer PRIMARY KEY, name text NOT NULL,"
             " applied_at timestamptz NOT NULL DEFAULT now())");
  setup.commit();
  int applied = 0;
  try {
    for (auto& m : migrations) {
      pqxx::work w(*conn);
      if (!w.exec_params("SELECT 1 FROM schema_migrations WHERE version = $1", m.version).empty())
        continue;
      if (progress)
        progress("applying " + m.name);
      w.exec(m.sql);
      w.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version,
                    m.name);
      w.commit();
      ++applied;
    }
  } catch (...) {
    pqxx::nontransaction unlock(*conn);
    unlock.exec("SELECT pg_advisory_unlock(" + std::to_string(migration_lock_key) + ")");
    throw;
  }
  pqxx::nontransaction unlock(*conn);
  unlock.exec("SELECT pg_advisory_unlock(" + std::to_string(migration_lock_key) + ")");
  if (progress)
    progress(applied ? "applied " + std::to_string(applied) + " migration(s)"
                     : "schema up to date");
  return applied;
}

int schema_version(const std::string& database_url) {
  auto conn = connect(database_url);
  pqxx::nontransaction tx(*conn);
  if (!tx.exec("SELECT to_regclass('schema_migrations') IS NOT NULL")[0][0].as<bool>())
    return 0;
  return tx.exec("SELECT COALESCE(max(version), 0) FROM schema_migrations")[0][0].as<int>();
}

} // namespace mg::db
