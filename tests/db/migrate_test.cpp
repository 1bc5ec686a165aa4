// db::migrate: a migrated database gets nothing more; two processes
// migrating an empty database at once apply each file exactly once.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "persistence/db.hpp"
#include "persistence/migrate.hpp"
#include "tests/support/db_fixture.hpp"

using namespace mg;

namespace {

/// An empty database on the fixture's server, dropped on destruction.
struct scratch_database {
  std::string admin_url;
  std::string name;
  std::string url;

  explicit scratch_database(const std::string& fixture_url)
      : admin_url(fixture_url),
        name("mg_mig_" +
             std::to_string(std::chrono::steady_clock::now().time_since_epoch().count())),
        url(test::url_for_database(fixture_url, name)) {
    auto c = db::connect(admin_url);
    pqxx::nontransaction tx(*c);
    tx.exec("CREATE DATABASE " + name);
  }
  ~scratch_database() {
    try {
      auto c = db::connect(admin_url);
      pqxx::nontransaction tx(*c);
      tx.exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    } catch (const std::exception& e) {
      BOOST_TEST_MESSAGE("could not drop " << name << ": " << e.what());
    }
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(migrate)

BOOST_FIXTURE_TEST_CASE(migrated_database_gets_nothing_more, test::db_fixture) {
  auto migrations = db::bundled_migrations();
  BOOST_REQUIRE(!migrations.empty());
  auto rows = count("SELECT count(*) FROM schema_migrations");
  BOOST_TEST(rows == static_cast<long>(migrations.size()));
  BOOST_TEST(db::migrate(url, migrations) == 0);
  BOOST_TEST(count("SELECT count(*) FROM schema_migrations") == rows);
}

BOOST_FIXTURE_TEST_CASE(schema_version_is_the_newest_applied_migration, test::db_fixture) {
  auto migrations = db::bundled_migrations();
  BOOST_REQUIRE(!migrations.empty());
  BOOST_TEST(db::schema_version(url) == migrations.back().version);
  scratch_database fresh(url);
  BOOST_TEST(db::schema_version(fresh.url) == 0); // never migrated: no schema_migrations
  db::migrate(fresh.url, {migrations.front()});
  BOOST_TEST(db::schema_version(fresh.url) == migrations.front().version);
}

BOOST_FIXTURE_TEST_CASE(concurrent_migrations_apply_each_file_once, test::db_fixture) {
  auto migrations = db::bundled_migrations();
  BOOST_REQUIRE(!migrations.empty());
  scratch_database fresh(url);
  {
    auto c = db::connect(fresh.url);
    pqxx::nontransaction tx(*c);
    BOOST_TEST(tx.exec("SELECT 1 FROM pg_tables WHERE tablename = 'schema_migrations'").empty());
  }

  std::mutex m;
  std::vector<std::string> errors;
  int applied[2] = {-1, -1};
  auto run = [&](int i) {
    try {
      applied[i] = db::migrate(fresh.url, migrations);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(m);
      errors.push_back(e.what());
    }
  };
  std::thread t1(run, 0), t2(run, 1);
  t1.join();
  t2.join();
  BOOST_TEST(errors.empty());
  for (auto& e : errors)
    BOOST_TEST_MESSAGE("migrate failed: " << e);
  BOOST_TEST(applied[0] + applied[1] == static_cast<int>(migrations.size()));
  BOOST_TEST((applied[0] == 0 || applied[1] == 0));

  auto c = db::connect(fresh.url);
  pqxx::nontransaction tx(*c);
  BOOST_TEST(tx.exec1("SELECT count(*) FROM schema_migrations")[0].as<long>() ==
             static_cast<long>(migrations.size()));
  for (auto& mig : migrations)
    BOOST_TEST(tx.exec_params1("SELECT count(*) FROM schema_migrations WHERE version = $1"
                               " AND name = $2",
                               mig.version, mig.name)[0]
                       .as<long>() == 1,
               mig.name);
  // the schema is really there
  BOOST_TEST(tx.exec1("SELECT count(*) FROM movement_requests")[0].as<long>() == 0);
  BOOST_TEST(db::migrate(fresh.url, migrations) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
