#pragma once
// Versioned SQL migrations: persistence/migrations/NNNN_name.sql, applied in
// order, each in its own transaction, under an advisory lock so two
// processes starting at once apply each file exactly once.
#include <functional>
#include <string>
#include <vector>

namespace mg::db {

struct migration {
  int version = 0;
  std::string name;
  std::string sql;
};

/// Reads NNNN_*.sql from `dir`, sorted by version.
std::vector<migration> load_migrations(const std::string& dir);

/// Applies the missing ones; returns how many were applied. `progress` gets
/// one line per migration.
int migrate(const std::string& database_url, const std::vector<migration>& migrations,
            const std::function<void(const std::string&)>& progress = {});

/// The newest applied migration's version at `database_url`; 0 for a
/// database never migrated.
int schema_version(const std::string& database_url);

/// Where the shipped migrations are: MG_MIGRATIONS_DIR, else an installed
/// package's share/movegate/migrations, else the source tree's.
std::string migrations_dir();

/// The migrations in migrations_dir().
std::vector<migration> bundled_migrations();

} // namespace mg::db
