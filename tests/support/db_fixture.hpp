#pragma once
// A fresh, migrated database per test case, cloned from a template database
// on the throwaway PostgreSQL the scripts start (MG_DATABASE_URL).
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "actors/workers/engine.hpp"
#include "config/settings.hpp"
#include "executors/sim.hpp"
#include "persistence/connection_slot.hpp"
#include "persistence/movement_store.hpp"
#include "tests/support/state_print.hpp"

namespace mg::test {

/// MG_DATABASE_URL with its database name replaced.
std::string url_for_database(const std::string& url, const std::string& dbname);

struct db_fixture {
  db_fixture();
  ~db_fixture();

  std::string url; // of this test's own database
  config::settings settings;
  std::shared_ptr<workers::engine_context> ctx; // sim providers on `url`
  db::connection_slot conn;                     // the "worker" connection
  std::unique_ptr<pqxx::connection> other;      // a second connection

  workers::engine& engine() { return ctx->e; }

  /// Stores a template (throws when it does not compile).
  void add_template(const std::string& json);
  /// Creates a request of `template_key` (PENDING_APPROVAL).
  std::string create(const std::string& template_key, const std::string& input_params = "{}",
                     const std::string& callback_url = "");
  /// Approves (roots become READY).
  db::approve_result approve(const std::string& id);
  std::string create_and_approve(const std::string& template_key,
                                 const std::string& input_params = "{}");
  db::reconcile_outcome reconcile(const std::string& id);
  db::request_snapshot snapshot(const std::string& id);
  std::string node_state(const std::string& id, const std::string& node_key);
  /// Any single-value SQL, as text ("" for NULL).
  std::string scalar(const std::string& sql);
  long count(const std::string& sql) { return std::stol(scalar(sql)); }
  /// Polls `sql` (a boolean) every 20 ms until it is true or `timeout` passes.
  bool wait_for(const std::string& sql, std::chrono::milliseconds timeout);
  void exec(const std::string& sql);
  /// Rebuilds the engine after changing `settings`.
  void apply_settings();

private:
  std::string dbname_;
  std::string admin_url_;
};

/// A db_fixture whose engine dispatches as the reference does
/// (MG_WAKEUPS_ENABLED=false): one node per claim transaction and every
/// observation left to the observer, for tests of what follows a submit.
struct reference_db_fixture : db_fixture {
  reference_db_fixture() {
    settings.wakeups_enabled = false;
    apply_settings();
  }
};

} // namespace mg::test
