#pragma once
// Shared by the movegate subcommands.
#include <caf/all.hpp>
#include <string>
#include <vector>

#include "actors/runtime.hpp"
#include "config/settings.hpp"
#include "persistence/movement_store.hpp"

namespace mg::app {

using args = std::vector<std::string>;

/// Settings from the environment; prints the error and exits 2 when a
/// value is invalid or MG_DATABASE_URL is missing.
config::settings load_settings_or_exit();

/// Loads every *.json template in `dir`; returns how many were new.
int load_templates(const std::string& database_url, const std::string& dir, bool verbose);

/// The shipped templates: MG_TEMPLATES_DIR, else an installed package's
/// share/movegate/templates, else the source tree's.
std::string default_templates_dir();

/// Creates and approves a movement, then tells the runtime (movement actor
/// and dispatcher) at once.
std::string create_and_approve(pqxx::connection& c, actors::runtime& rt, db::create_params p);

/// Value of `--name VALUE` in `a`, or `fallback`.
std::string flag(const args& a, const std::string& name, const std::string& fallback);
bool has_flag(const args& a, const std::string& name);

int cmd_migrate(const args& a);
int cmd_serve(const args& a);
int cmd_demo(const args& a);
int cmd_bench(const args& a);
int cmd_templates(const args& a);
int cmd_keys(const args& a);
int cmd_movements(const args& a);
int cmd_workers(const args& a);

/// Rows as left-aligned columns two spaces apart (the first row is the header).
void print_table(const std::vector<std::vector<std::string>>& rows);
int cmd_callbacks(const args& a);

} // namespace mg::app
