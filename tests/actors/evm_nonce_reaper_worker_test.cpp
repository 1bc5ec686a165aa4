// evm_nonce_reaper in a real runtime: on by default and in the core group
// when an EVM endpoint is configured (seeded heartbeat row, iterations
// counted), skipped without one, reclaiming a stale reservation in a running
// process, and a reaper crash ending the process with exit code 1 (core
// fail-fast, never restarted).
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <memory>

#include "actors/workers/worker_table.hpp"
#include "persistence/evm_nonce_store.hpp"
#include "tests/support/runtime_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

/// Nothing listens there: the reaper needs the chain only for broadcast rows.
const char* unreachable_chain = "1337=http://127.0.0.1:9";

void stale_reservation(test::runtime_fixture& f) {
  pqxx::connection c(f.url);
  db::reserve_nonce(
      c, {1337, "0x90f8bf6a479f320ead074411a4b0e7944ea8c9c1"},
      {"00000000-0000-4000-8000-000000000009:1", "00000000-0000-4000-8000-000000000009", 1}, 0, 0);
  f.exec("UPDATE evm_nonce_reservation SET reserved_at = now() - interval '1 hour'");
}

} // namespace

BOOST_AUTO_TEST_SUITE(evm_nonce_reaper_worker)

BOOST_FIXTURE_TEST_CASE(evm_nonce_reaper_runs_in_the_core_group_and_reclaims,
                        test::runtime_fixture) {
  stale_reservation(*this);
  settings.evm_rpc_urls = unreachable_chain;
  settings.evm_nonce_reaper_interval_seconds = 0.2;
  apply_settings();
  start();
  BOOST_TEST(wait_for("SELECT state = 'reclaimed' FROM evm_nonce_reservation", 10s));
  BOOST_TEST(count("SELECT count(*) FROM worker_heartbeats WHERE worker_name = "
                   "'evm_nonce_reaper' AND worker_group = 'core'") == 1);
  BOOST_TEST(wait_for("SELECT iterations > 1 FROM worker_heartbeats WHERE worker_name = "
                      "'evm_nonce_reaper'",
                      10s));
}

BOOST_FIXTURE_TEST_CASE(evm_nonce_reaper_is_skipped_without_an_endpoint, test::runtime_fixture) {
  start();
  std::this_thread::sleep_for(300ms);
  BOOST_TEST(count("SELECT count(*) FROM worker_heartbeats WHERE worker_name = "
                   "'evm_nonce_reaper'") == 0);
}

BOOST_FIXTURE_TEST_CASE(evm_nonce_reaper_crash_stops_the_process_with_exit_code_1,
                        test::runtime_fixture) {
  auto on = settings;
  on.evm_rpc_urls = unreachable_chain;
  on.evm_nonce_reaper_interval_seconds = 0.1;
  auto spec = *actors::make_worker("evm_nonce_reaper", std::make_shared<workers::engine_context>(
                                                           on, domain::provider_registry{}));
  auto passes = std::make_shared<std::atomic<int>>(0);
  auto real = spec.pass;
  spec.pass = [real, passes](db::connection_slot& c) {
    auto r = real(c);
    if (++*passes == 2)
      throw 42; // anything the loop runner does not catch
    return r;
  };
  start({spec});
  BOOST_TEST(wait_exit(15s) == 1);
  BOOST_TEST(passes->load() == 2); // not restarted
}

BOOST_AUTO_TEST_SUITE_END()
