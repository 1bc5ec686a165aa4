// balance_history_rollup on the real database: hourly min/max/last/samples
// per venue, asset and UTC hour; a re-run changes nothing (not even
// updated_at); new and late snapshots update only their hour; an hour that
// retention has started to delete keeps its rollup; the worker is on by
// default, never skipped for a missing client, a sidecar with a heartbeat.
#include <boost/test/unit_test.hpp>

#include "actors/workers/balance_history_rollup.hpp"
#include "actors/workers/worker_table.hpp"
#include "persistence/balance_store.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/runtime_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

/// `hours_ago` whole UTC hours before the current one, plus `minutes`.
std::string at(int hours_ago, int minutes) {
  return "date_trunc('hour', now(), 'UTC') - interval '" + std::to_string(hours_ago) +
         " hours' + interval '" + std::to_string(minutes) + " minutes'";
}

void add_snapshot(test::db_fixture& f, const std::string& venue, const std::string& amount,
                  const std::string& when, const std::string& asset = "USDC") {
  f.exec("INSERT INTO balance_snapshots (venue_key, asset, amount, fetched_at) VALUES ('" + venue +
         "', '" + asset + "', " + amount + ", " + when + ")");
}

/// Every history row (with updated_at), to compare before and after.
std::string history(test::db_fixture& f) {
  return f.scalar("SELECT coalesce(string_agg(concat_ws(':', venue_key, asset,"
                  " extract(epoch FROM date_trunc('hour', now(), 'UTC') - hour)::bigint / 3600,"
                  " min_amount, max_amount, last_amount, samples, updated_at), ','"
                  " ORDER BY venue_key, asset, hour), '') FROM balance_history");
}

/// The same without updated_at: the rolled-up values only.
std::string values(test::db_fixture& f) {
  return f.scalar("SELECT coalesce(string_agg(concat_ws(':', venue_key, asset,"
                  " extract(epoch FROM date_trunc('hour', now(), 'UTC') - hour)::bigint / 3600,"
                  " min_amount, max_amount, last_amount, samples), ','"
                  " ORDER BY venue_key, asset, hour), '') FROM balance_history");
}

long roll(test::db_fixture& f, int retention_days = 30) {
  return workers::balance_history_pass(f.conn, retention_days).processed;
}

} // namespace

BOOST_AUTO_TEST_SUITE(balance_history)

BOOST_FIXTURE_TEST_CASE(rolls_snapshots_into_hourly_min_max_last_samples, test::db_fixture) {
  add_snapshot(*this, "gateway", "100", at(3, 5));
  add_snapshot(*this, "gateway", "80.5", at(3, 20));
  add_snapshot(*this, "gateway", "120", at(3, 40));
  add_snapshot(*this, "gateway", "90", at(3, 59)); // the last of hour -3
  add_snapshot(*this, "gateway", "7", at(2, 0));   // on the hour: belongs to hour -2
  add_snapshot(*this, "gateway", "50", at(3, 10), "EURC");
  add_snapshot(*this, "other", "1", at(3, 30));
  BOOST_TEST(roll(*this) == 4);
  BOOST_TEST(values(*this) == "gateway:EURC:3:50:50:50:1,"
                              "gateway:USDC:3:80.5:120:90:4,"
                              "gateway:USDC:2:7:7:7:1,"
                              "other:USDC:3:1:1:1:1");
  BOOST_TEST(count("SELECT count(*) FROM balance_history WHERE hour <> date_trunc('hour', hour, "
                   "'UTC') OR last_fetched_at < hour") == 0);
}

BOOST_FIXTURE_TEST_CASE(rerun_changes_nothing, test::db_fixture) {
  add_snapshot(*this, "gateway", "100", at(2, 5));
  add_snapshot(*this, "gateway", "101", at(1, 5));
  add_snapshot(*this, "gateway", "102", at(0, 0));
  BOOST_TEST(roll(*this) == 3);
  auto before = history(*this);
  BOOST_TEST(roll(*this) == 0);
  BOOST_TEST(roll(*this) == 0);
  BOOST_TEST(history(*this) == before); // updated_at included: no row was rewritten
}

BOOST_FIXTURE_TEST_CASE(new_and_late_snapshots_update_only_their_hour, test::db_fixture) {
  add_snapshot(*this, "gateway", "100", at(3, 5));
  add_snapshot(*this, "gateway", "100", at(1, 5));
  add_snapshot(*this, "gateway", "100", at(0, 0));
  BOOST_TEST(roll(*this) == 3);
  auto old_hour = scalar("SELECT updated_at FROM balance_history WHERE hour = " + at(3, 0));
  // A new snapshot this hour, and one committed late into the previous hour.
  exec("INSERT INTO balance_snapshots (venue_key, asset, amount) VALUES ('gateway', 'USDC', 5)");
  add_snapshot(*this, "gateway", "300", at(1, 30));
  BOOST_TEST(roll(*this) == 2);
  BOOST_TEST(values(*this) == "gateway:USDC:3:100:100:100:1,"
                              "gateway:USDC:1:100:300:300:2,"
                              "gateway:USDC:0:5:100:5:2");
  BOOST_TEST(scalar("SELECT updated_at FROM balance_history WHERE hour = " + at(3, 0)) == old_hour);
}

BOOST_FIXTURE_TEST_CASE(hour_reached_by_retention_keeps_its_rollup, test::db_fixture) {
  // Hour -745 (31 days ago) rolled while complete...
  const int old = 31 * 24 + 1;
  add_snapshot(*this, "gateway", "10", at(old, 10));
  add_snapshot(*this, "gateway", "20", at(old, 20));
  add_snapshot(*this, "gateway", "30", at(old, 30));
  BOOST_TEST(roll(*this, 40) == 1);
  BOOST_TEST(values(*this) == "gateway:USDC:" + std::to_string(old) + ":10:30:30:3");
  // ...then retention (30 days) deletes two of its snapshots: recomputing
  // it from the one left would be wrong, so it is left alone.
  exec("DELETE FROM balance_snapshots WHERE amount IN (10, 20)");
  BOOST_TEST(roll(*this, 30) == 0);
  BOOST_TEST(values(*this) == "gateway:USDC:" + std::to_string(old) + ":10:30:30:3");
}

BOOST_FIXTURE_TEST_CASE(maker_is_on_by_default_and_never_skipped, test::db_fixture) {
  BOOST_TEST(settings.gateway_api_url.empty()); // no client configured at all
  auto spec = actors::make_worker("balance_history_rollup", ctx);
  BOOST_REQUIRE(spec);
  BOOST_TEST(spec->name == "balance_history_rollup");
  BOOST_TEST(std::string(to_string(spec->group)) == "sidecar");
  BOOST_TEST(spec->policy.interval_seconds == settings.balance_history_interval_seconds);
  settings.balance_history_enabled = false;
  apply_settings();
  BOOST_TEST(!actors::make_worker("balance_history_rollup", ctx));
}

BOOST_FIXTURE_TEST_CASE(runtime_runs_it_in_the_sidecar_group_with_a_heartbeat,
                        test::runtime_fixture) {
  settings.balance_history_interval_seconds = 0.1;
  apply_settings();
  add_snapshot(*this, "gateway", "42", at(1, 0));
  start();
  BOOST_TEST(count("SELECT count(*) FROM worker_heartbeats WHERE worker_name ="
                   " 'balance_history_rollup' AND worker_group = 'sidecar'"
                   " AND runtime_node = 'test-node'") == 1);
  BOOST_TEST(eventually([&] { return values(*this) == "gateway:USDC:1:42:42:42:1"; }, 5s));
  // New snapshots reach the current hour's row on a later pass.
  exec("INSERT INTO balance_snapshots (venue_key, asset, amount) VALUES ('gateway', 'USDC', 43)");
  BOOST_TEST(eventually(
      [&] { return count("SELECT count(*) FROM balance_history WHERE last_amount = 43") == 1; },
      5s));
  BOOST_TEST(eventually(
      [&] {
        return count("SELECT count(*) FROM worker_heartbeats WHERE worker_name ="
                     " 'balance_history_rollup' AND status = 'running' AND iterations >= 2") == 1;
      },
      5s));
  BOOST_TEST(stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
