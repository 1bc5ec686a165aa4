// The cluster front door (SPEC §8) against a real `movegate serve`: the
// example sibling program and movegate_client reach the movement service
// through CAF actor messages alone (no HTTP): login proof, scopes,
// four-eyes, bounded failures, and the refusal of a non-loopback address.
#include <boost/test/unit_test.hpp>
#include <caf/io/all.hpp>
#include <chrono>
#include <csignal>
#include <fstream>

#include "actors/cluster/movement_client.hpp"
#include "build_paths.hpp"
#include "domain/api_auth.hpp"
#include "tests/support/cluster_fixture.hpp"

using namespace mg;
using namespace std::chrono;
using namespace std::chrono_literals;

namespace {

using key = test::api_key_spec;
using namespace test::cluster_keys;
using namespace test::cluster_movements;

const key both{"both", "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0", R"(["create", "approve", "read"])"};

std::string sibling_binary() {
  return std::string(MG_BINARY_DIR) + "/movegate-sibling";
}

struct cluster_fixture : test::cluster_serve_fixture {
  cluster_fixture() {
    add_template(chain_template);
    keys = {creator, approver, reader, both};
  }

  void start_serve() { start_cluster("e2e-cluster"); }
};

/// A type only the test's side registers (movegate has never heard of it),
/// and one nobody registers.
struct only_here {
  int32_t x = 0;
};
template <class Inspector> typename Inspector::result_type inspect(Inspector& f, only_here& v) {
  return f(caf::meta::type_name("mg_test_only_here"), v.x);
}
struct nowhere {
  int32_t x = 0;
};
template <class Inspector> typename Inspector::result_type inspect(Inspector& f, nowhere& v) {
  return f(caf::meta::type_name("mg_test_nowhere"), v.x);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_SUITE(cluster_actor_api)

BOOST_FIXTURE_TEST_CASE(sibling_creates_approves_and_follows_a_movement_to_completed,
                        cluster_fixture) {
  start_serve();
  // The bound port is what cluster_nodes records.
  BOOST_TEST(scalar("SELECT cluster_port FROM cluster_nodes WHERE runtime_node = 'e2e-cluster'") ==
             std::to_string(cluster_port));

  auto r =
      test::run_shell(sibling_binary() + " --cluster 127.0.0.1:" + std::to_string(cluster_port) +
                      " --keys " + keys_path +
                      " --creator creator --approver approver --template cl_chain"
                      " --amount 5 --input '{\"to\": \"0xabc\"}' --timeout 30");
  BOOST_TEST_MESSAGE(r.output);
  BOOST_TEST(r.status == 0, r.output << "\n" << server->log());
  BOOST_TEST(contains(r.output, "state PENDING_APPROVAL"), r.output);
  BOOST_TEST(contains(r.output, "approved "), r.output);
  BOOST_TEST(contains(r.output, "state COMPLETED"), r.output);

  // Through the same service layer as HTTP: one audit row per mutating call,
  // each under the key that made it.
  auto id = scalar("SELECT id FROM movement_requests");
  BOOST_TEST(scalar("SELECT request_state FROM movement_requests") == "COMPLETED");
  BOOST_TEST(count("SELECT count(*) FROM audit_outbox") == 2);
  BOOST_TEST(count("SELECT count(*) FROM audit_outbox WHERE actor = 'creator'") == 1);
  BOOST_TEST(count("SELECT count(*) FROM audit_outbox WHERE actor = 'approver'") == 1);

  // The library directly: get answers the /v3 movement object, list pages.
  auto c = session(reader);
  auto got = c->get(id);
  BOOST_TEST(got.status == 200);
  BOOST_TEST(test::json_field(got.body, "request_state") == "COMPLETED");
  auto listed = c->list("state=COMPLETED&limit=5");
  BOOST_TEST(listed.status == 200);
  BOOST_TEST(contains(listed.body, id), listed.body);
  BOOST_TEST(c->list("bogus=1").status == 400);
  BOOST_TEST(c->get("00000000-0000-0000-0000-000000000000").status == 404);
}

BOOST_FIXTURE_TEST_CASE(bad_signature_unknown_key_and_replayed_nonce_are_refused_clearly,
                        cluster_fixture) {
  start_serve();
  cluster::movement_client c(sys(), 10s);
  c.connect("127.0.0.1", static_cast<uint16_t>(cluster_port));
  auto now =
      static_cast<uint64_t>(duration_cast<seconds>(system_clock::now().time_since_epoch()).count());
  auto sign = [&](const key& k, uint64_t ts, const std::string& nonce) {
    return api::sign_cluster_login(k.secret, k.id, std::to_string(ts), nonce);
  };

  auto bad_sig = error_of(
      [&] { c.login_with(creator.id, now, cluster::random_nonce(), sign(approver, now, "x")); });
  BOOST_TEST(contains(bad_sig, "(401): bad signature"), bad_sig);

  auto unknown = error_of([&] { c.login("nobody", creator.secret); });
  BOOST_TEST(contains(unknown, "(401): unknown key"), unknown);

  auto stale_nonce = cluster::random_nonce();
  auto stale = error_of([&] {
    c.login_with(creator.id, now - 400, stale_nonce, sign(creator, now - 400, stale_nonce));
  });
  BOOST_TEST(contains(stale, "300 s"), stale);

  auto short_nonce =
      error_of([&] { c.login_with(creator.id, now, "short", sign(creator, now, "short")); });
  BOOST_TEST(contains(short_nonce, "nonce must be"), short_nonce);

  auto nonce = cluster::random_nonce();
  auto proof = sign(creator, now, nonce);
  BOOST_TEST(error_of([&] { c.login_with(creator.id, now, nonce, proof); }) == "");
  BOOST_TEST(c.logged_in());
  auto replay = error_of([&] { c.login_with(creator.id, now, nonce, proof); });
  BOOST_TEST(contains(replay, "(401): replayed nonce"), replay);
  BOOST_TEST(!c.logged_in());
  // A login proof is not an HTTP request either: the nonce row is per key.
  BOOST_TEST(count("SELECT count(*) FROM api_nonces WHERE nonce = '" + nonce + "'") == 1);

  // Calls without a session fail at once, never hang.
  BOOST_TEST(contains(error_of([&] { c.get("x"); }), "not logged in"));
}

BOOST_FIXTURE_TEST_CASE(calls_outside_the_keys_scopes_answer_403_and_four_eyes_holds,
                        cluster_fixture) {
  start_serve();
  auto r = session(reader);
  auto refused = r->create(create_body("scope-1"));
  BOOST_TEST(refused.status == 403);
  BOOST_TEST(contains(refused.body, "key lacks scope 'create'"), refused.body);
  BOOST_TEST(count("SELECT count(*) FROM movement_requests") == 0);

  auto c = session(creator);
  auto created = c->create(create_body("scope-2"));
  BOOST_TEST(created.status == 201, created.body);
  auto id = test::json_field(created.body, "id");
  // Same idempotency key and body: deduplicated, as over HTTP.
  auto again = c->create(create_body("scope-2"));
  BOOST_TEST(again.status == 200);
  BOOST_TEST(test::json_field(again.body, "deduplicated") == "true");
  BOOST_TEST(c->create("{not json").status == 400);
  BOOST_TEST(c->create("[1]").status == 400);

  auto no_approve = c->approve(id);
  BOOST_TEST(no_approve.status == 403);
  BOOST_TEST(contains(no_approve.body, "key lacks scope 'approve'"), no_approve.body);
  BOOST_TEST(r->approve(id).status == 403);
  BOOST_TEST(r->cancel(id).status == 403);

  // Four-eyes: the key that created a request cannot approve it.
  auto b = session(both);
  auto own = b->create(create_body("scope-3"));
  BOOST_TEST(own.status == 201);
  auto own_id = test::json_field(own.body, "id");
  auto self_approve = b->approve(own_id);
  BOOST_TEST(self_approve.status == 403, self_approve.body);
  BOOST_TEST(scalar("SELECT request_state FROM movement_requests WHERE id = '" + own_id + "'") ==
             "PENDING_APPROVAL");

  auto a = session(approver);
  BOOST_TEST(a->reject(own_id, R"({"reason": "not today"})").status == 200);
  BOOST_TEST(a->reject(own_id).status == 409);
  BOOST_TEST(a->cancel(id, R"({"reason": "changed my mind"})").status == 200);
  BOOST_TEST(scalar("SELECT request_state FROM movement_requests WHERE id = '" + id + "'") ==
             "CANCELLED");
  // Refused calls write no audit row; create + create + reject + cancel do.
  BOOST_TEST(count("SELECT count(*) FROM audit_outbox") == 4);
}

BOOST_FIXTURE_TEST_CASE(nothing_listening_and_a_peer_killed_mid_session_fail_in_bounded_time,
                        cluster_fixture) {
  // Nothing listens on the port.
  {
    cluster::movement_client c(sys(), 3s);
    auto started = steady_clock::now();
    auto why = error_of([&] { c.connect("127.0.0.1", static_cast<uint16_t>(test::free_port())); });
    BOOST_TEST(contains(why, "connect"), why);
    BOOST_TEST(duration<double>(steady_clock::now() - started).count() < 5.0);
  }
  // A session whose serve dies.
  start_serve();
  auto c = session(creator, 3s);
  BOOST_TEST(c->create(create_body("dead-1")).status == 201);
  stop(SIGKILL);
  auto started = steady_clock::now();
  auto why = error_of([&] { c->get("00000000-0000-0000-0000-000000000000"); });
  BOOST_TEST_MESSAGE("after SIGKILL: " << why);
  BOOST_TEST(!why.empty());
  BOOST_TEST(contains(why, "127.0.0.1:" + std::to_string(cluster_port)), why);
  BOOST_TEST(duration<double>(steady_clock::now() - started).count() < 5.0);
  // Reconnecting to the dead address fails just as clearly.
  auto again = error_of([&] { c->connect("127.0.0.1", static_cast<uint16_t>(cluster_port)); });
  BOOST_TEST(contains(again, "connect"), again);
}

BOOST_FIXTURE_TEST_CASE(a_frozen_peer_times_out_with_the_reason_and_recovers_after,
                        cluster_fixture) {
  start_serve();
  auto c = session(creator, 2s);
  BOOST_TEST(c->list().status == 200);
  BOOST_REQUIRE(server->freeze());
  auto started = steady_clock::now();
  auto why = error_of([&] { c->list(); });
  double waited = duration<double>(steady_clock::now() - started).count();
  server->signal(SIGCONT);
  BOOST_TEST(contains(why, "no answer from movegate at 127.0.0.1:" + std::to_string(cluster_port) +
                               " within 2000 ms"),
             why);
  BOOST_TEST(waited >= 1.9);
  BOOST_TEST(waited < 4.0);
  // Resumed, it answers again on the same session.
  BOOST_TEST(c->list().status == 200);
}

BOOST_FIXTURE_TEST_CASE(unregistered_and_unknown_messages_get_an_error_not_a_hang,
                        cluster_fixture) {
  start_serve();
  caf::actor_system_config raw_cfg;
  raw_cfg.add_message_type<only_here>("mg_test_only_here");
  cluster::configure(raw_cfg);
  caf::actor_system raw_sys{raw_cfg};
  auto typed = raw_sys.middleman().remote_actor<actors::movement_api_actor>(
      "127.0.0.1", static_cast<uint16_t>(cluster_port));
  BOOST_REQUIRE(typed);
  // Untyped on purpose: the typed handle would not let these through.
  auto api = caf::actor_cast<caf::actor>(*typed);
  caf::scoped_actor self{raw_sys};
  // The error each message is answered with, rendered ("" when none).
  auto answer_to = [&](auto&& message) {
    std::string got;
    auto started = steady_clock::now();
    self->request(api, 5s, std::forward<decltype(message)>(message))
        .receive([](const caf::message&) {}, [&](caf::error& e) { got = raw_sys.render(e); });
    BOOST_TEST(duration<double>(steady_clock::now() - started).count() < 2.0);
    return got;
  };
  // Not registered at movegate, registered nowhere, registered but not in
  // movement_api's protocol: each answered with an error at once (well
  // inside the 5 s request timeout), not silence.
  auto unknown_type = answer_to(only_here{1});
  BOOST_TEST(contains(unknown_type, "unexpected_message"), unknown_type);
  BOOST_TEST(!answer_to(nowhere{2}).empty());
  auto not_in_protocol = answer_to(std::string("hello"));
  BOOST_TEST(contains(not_in_protocol, "unexpected_message"), not_in_protocol);
  // And the door still works for everyone else.
  BOOST_TEST(session(creator)->create(create_body("after-junk")).status == 201);
  BOOST_TEST(server->running());
}

BOOST_FIXTURE_TEST_CASE(non_loopback_cluster_addr_without_tls_exits_1_with_the_reason,
                        cluster_fixture) {
  auto e = env("e2e-cluster");
  e["MG_CLUSTER_ADDR"] = "0.0.0.0:" + std::to_string(test::free_port());
  test::child serve({"serve"}, e, prefix + "-nonloopback.log");
  BOOST_TEST(serve.wait(20s) == 1);
  BOOST_TEST(contains(serve.log(), "is not a loopback address"), serve.log());
  BOOST_TEST(contains(serve.log(), "TLS"), serve.log());
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes") == 0);
}

BOOST_AUTO_TEST_SUITE_END()
