// ccip_stranded_reaper, capital_transfer_followup and cex_transfer_ingest in
// a real runtime: their flags (the reaper on by default, the follow-up off
// by default, the ingest on by a non-empty venue list and skipped without
// MG_CEX_VENUE_API_URL), their groups (reaper core, the others sidecar) in
// the seeded heartbeats and the supervision tree, their work in a running
// process, and a reaper crash ending the process with exit code 1.
#include <boost/test/unit_test.hpp>
#include <httplib.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "actors/workers/worker_table.hpp"
#include "tests/support/db_helpers.hpp"
#include "tests/support/http_peer.hpp"
#include "tests/support/runtime_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

std::shared_ptr<workers::engine_context> context_with(const config::settings& s) {
  return std::make_shared<workers::engine_context>(s, domain::provider_registry{});
}

/// A pending CCIP intent aged two hours on a fresh (unapproved) request's node.
std::string aged_intent(test::runtime_fixture& f) {
  f.add_template(test::one_node("ccip", "ccip_send"));
  auto request = f.create("ccip");
  auto node = test::node_id(f, request);
  return f.scalar("INSERT INTO ccip_send_intent (request_id, node_id, attempt_no,"
                  " source_chain_selector, dest_chain_selector, created_at) VALUES ('" +
                  request + "', '" + node +
                  "', 0, 1, 2, now() - interval '2 hours')"
                  " RETURNING id");
}

std::string supervisor_status(test::runtime_fixture& f) {
  std::string out;
  (*f.self)
      ->request(f.rt->supervisor(), 5s, actors::status_atom::value)
      .receive([&](const std::string& s) { out = s; }, [&](caf::error&) { out = "error"; });
  return out;
}

long heartbeat_rows(test::runtime_fixture& f, const std::string& worker, const std::string& group) {
  return f.count("SELECT count(*) FROM worker_heartbeats WHERE worker_name = '" + worker +
                 "' AND worker_group = '" + group + "' AND runtime_node = 'test-node'");
}

/// One venue history page at GET /{venue}/transfers.
struct one_page_venue {
  httplib::Server server;
  std::thread thread;
  int port = 0;
  one_page_venue() {
    server.Get(R"(/([^/]+)/transfers)", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"transfers": [{"id": "t-1", "direction": "deposit", "asset": "USDC",)"
                      R"( "amount": "42.5", "status": "completed",)"
                      R"( "occurred_at": "2024-05-01T12:00:00Z"}], "next_cursor": "c1"})",
                      "application/json");
    });
    port = test::listen_in_background(server, thread);
  }
  ~one_page_venue() { test::stop_listening(server, thread); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
};

} // namespace

BOOST_AUTO_TEST_SUITE(ccip_capital_cex_workers)

BOOST_FIXTURE_TEST_CASE(reaper_is_on_by_default_in_the_core_group, test::runtime_fixture) {
  BOOST_TEST(settings.ccip_stranded_reaper_enabled); // the reference's default
  settings.ccip_stranded_reaper_interval_seconds = 17;
  auto spec = actors::make_worker("ccip_stranded_reaper", context_with(settings));
  BOOST_REQUIRE(spec.has_value());
  BOOST_TEST(spec->name == "ccip_stranded_reaper");
  BOOST_TEST(std::string(to_string(spec->group)) == "core");
  BOOST_TEST(spec->policy.interval_seconds == 17.0);
  settings.ccip_stranded_reaper_enabled = false;
  BOOST_TEST(!actors::make_worker("ccip_stranded_reaper", context_with(settings)).has_value());
}

BOOST_FIXTURE_TEST_CASE(followup_is_off_by_default_and_a_sidecar_when_on, test::runtime_fixture) {
  BOOST_TEST(!actors::make_worker("capital_transfer_followup", context_with(settings)).has_value());
  settings.capital_transfer_followup_enabled = true;
  settings.capital_transfer_followup_interval_seconds = 23;
  auto spec = actors::make_worker("capital_transfer_followup", context_with(settings));
  BOOST_REQUIRE(spec.has_value());
  BOOST_TEST(spec->name == "capital_transfer_followup");
  BOOST_TEST(std::string(to_string(spec->group)) == "sidecar");
  BOOST_TEST(spec->policy.interval_seconds == 23.0);
}

BOOST_FIXTURE_TEST_CASE(ingest_is_on_by_its_venue_list_and_needs_the_api_url,
                        test::runtime_fixture) {
  BOOST_TEST(!actors::make_worker("cex_transfer_ingest", context_with(settings)).has_value());
  settings.cex_transfer_ingest_venues_csv = " , ";
  BOOST_TEST(!actors::make_worker("cex_transfer_ingest", context_with(settings)).has_value());
  settings.cex_transfer_ingest_venues_csv = "binance,okx";
  BOOST_TEST(
      !actors::make_worker("cex_transfer_ingest", context_with(settings)).has_value()); // no URL
  settings.cex_venue_api_url = "ftp://venues";
  BOOST_TEST(!actors::make_worker("cex_transfer_ingest", context_with(settings)).has_value());
  settings.cex_venue_api_url = "http://127.0.0.1:9/venues";
  settings.cex_transfer_ingest_venues_csv = "binance,ok/x";
  BOOST_TEST(!actors::make_worker("cex_transfer_ingest", context_with(settings)).has_value());
  settings.cex_transfer_ingest_venues_csv = "binance,okx";
  settings.cex_transfer_ingest_interval_seconds = 29;
  auto spec = actors::make_worker("cex_transfer_ingest", context_with(settings));
  BOOST_REQUIRE(spec.has_value());
  BOOST_TEST(spec->name == "cex_transfer_ingest");
  BOOST_TEST(std::string(to_string(spec->group)) == "sidecar");
  BOOST_TEST(spec->policy.interval_seconds == 29.0);
}

BOOST_FIXTURE_TEST_CASE(runtime_runs_all_three_in_their_groups, test::runtime_fixture) {
  one_page_venue venue;
  settings.ccip_stranded_reaper_interval_seconds = 0.2;
  settings.capital_transfer_followup_enabled = true;
  settings.capital_transfer_followup_interval_seconds = 0.2;
  settings.cex_transfer_ingest_venues_csv = "alpha";
  settings.cex_venue_api_url = venue.url();
  settings.cex_transfer_ingest_interval_seconds = 0.2;
  apply_settings();
  auto intent = aged_intent(*this);
  auto capital = scalar("INSERT INTO capital_transfer_requests (network_class, from_venue,"
                        " to_venue, asset, amount, requested_by, created_at) VALUES ('devnet',"
                        " 'a', 'b', 'USDC', 1, 't', now() - interval '1 hour') RETURNING id");
  start();
  BOOST_TEST(heartbeat_rows(*this, "ccip_stranded_reaper", "core") == 1);
  BOOST_TEST(heartbeat_rows(*this, "capital_transfer_followup", "sidecar") == 1);
  BOOST_TEST(heartbeat_rows(*this, "cex_transfer_ingest", "sidecar") == 1);
  auto status = supervisor_status(*this);
  BOOST_TEST(status.find("\"name\":\"ccip_stranded_reaper\",\"group\":\"core\"") !=
             std::string::npos);
  BOOST_TEST(status.find("\"name\":\"capital_transfer_followup\",\"group\":\"sidecar\"") !=
             std::string::npos);
  BOOST_TEST(status.find("\"name\":\"cex_transfer_ingest\",\"group\":\"sidecar\"") !=
             std::string::npos);
  BOOST_TEST(eventually(
      [&] {
        return scalar("SELECT status FROM ccip_send_intent WHERE id = '" + intent + "'") ==
               "stranded";
      },
      5s));
  BOOST_TEST(eventually(
      [&] {
        return scalar("SELECT attention_required FROM capital_transfer_requests WHERE id = '" +
                      capital + "'") == "t";
      },
      5s));
  BOOST_TEST(eventually(
      [&] { return count("SELECT count(*) FROM cex_transfers WHERE venue = 'alpha'") == 1; }, 5s));
  // Heartbeats record the passes and the items.
  BOOST_TEST(eventually(
      [&] {
        return count("SELECT count(*) FROM worker_heartbeats WHERE worker_name IN"
                     " ('ccip_stranded_reaper', 'capital_transfer_followup', 'cex_transfer_ingest')"
                     " AND iterations > 0 AND items_processed >= 1") == 3;
      },
      5s));
  BOOST_TEST(stop() == 0);
}

BOOST_FIXTURE_TEST_CASE(disabled_flags_start_none_of_them, test::runtime_fixture) {
  settings.ccip_stranded_reaper_enabled = false;
  apply_settings();
  start();
  BOOST_TEST(
      count("SELECT count(*) FROM worker_heartbeats WHERE worker_name IN"
            " ('ccip_stranded_reaper', 'capital_transfer_followup', 'cex_transfer_ingest')") == 0);
  BOOST_TEST(stop() == 0);
}

BOOST_FIXTURE_TEST_CASE(reaper_crash_stops_the_process_with_exit_code_1, test::runtime_fixture) {
  auto intent = aged_intent(*this);
  // The maker's own spec (its name, group and real pass) fails outside its
  // loop on its second pass; the runtime's default instance is turned off
  // so this one is the only reaper.
  auto on = settings;
  on.ccip_stranded_reaper_interval_seconds = 0.1;
  auto spec = *actors::make_worker("ccip_stranded_reaper", context_with(on));
  settings.ccip_stranded_reaper_enabled = false;
  apply_settings();
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
  BOOST_TEST(scalar("SELECT status FROM ccip_send_intent WHERE id = '" + intent + "'") ==
             "stranded");
}

BOOST_AUTO_TEST_SUITE_END()
