// A session is a capability, not an address (SPEC §8). CAF 0.17 delivers a
// message from any connected peer to any actor id the process ever sent to
// a peer, so these tests play a second CAF node that knows (or guesses)
// the ids of other keys' sessions and of the event fan-out, and forges
// handles for them: whatever it sends is refused (401, logged), nothing
// changes in PostgreSQL, and no event reaches it. Logins are throttled, a
// key holds at most MG_CLUSTER_MAX_SESSIONS_PER_KEY live sessions, and a
// flood of logins leaves the process's thread count bounded while a
// legitimate sibling completes its movement.
#include <boost/test/unit_test.hpp>
#include <caf/io/all.hpp>
#include <chrono>
#include <fstream>
#include <thread>

#include "actors/cluster/movement_client.hpp"
#include "actors/cluster/provider_actor.hpp"
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

const key admin{"admin", "ad000000ad000000ad000000ad000000", R"(["admin", "approve", "read"])"};

/// The chain of cluster_movements, its confirm node polled 15 times a
/// second apart: a movement that stays EXECUTING for ~15 s.
const char* slow_template = R"({"template_key": "cl_slow", "version": 1,
    "nodes": [
      {"node_key": "send", "action_type": "chain_transfer", "executor_key": "sim",
       "side_effect": true, "config": {"to": "$ref:input.to"}},
      {"node_key": "confirm", "action_type": "destination_chain_finality_observe",
       "executor_key": "sim", "config": {"tx": "$ref:send.tx_hash",
       "sim": {"polls_until_done": 15, "retry_after_seconds": 1}}}],
    "edges": [["send", "confirm"]]})";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

int occurrences(const std::string& text, const std::string& part) {
  int n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
    ++n;
  return n;
}

/// Threads of process `pid` (/proc/<pid>/status).
int threads_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Threads:", 0) == 0)
      return std::stoi(line.substr(8));
  return -1;
}

struct session_token_fixture : test::cluster_serve_fixture {
  session_token_fixture() {
    add_template(chain_template);
    add_template(slow_template);
    keys = {creator, approver, reader, admin};
  }

  void start_serve(std::map<std::string, std::string> extra = {}) {
    start_cluster("e2e-session-token", std::move(extra));
  }

  /// A 64-hex-character token that is nobody's.
  static std::string guessed_token() { return std::string(64, 'a'); }
};

} // namespace

BOOST_AUTO_TEST_SUITE(cluster_session_token)

BOOST_FIXTURE_TEST_CASE(a_peer_with_a_sessions_handle_cannot_act_through_it,
                        session_token_fixture) {
  start_serve();
  // The victim: a sibling process holding an admin + approve session (it
  // offers an executor through it). Its session's actor id is in its log.
  test::child victim(std::string(MG_BINARY_DIR) + "/movegate-sibling-executor",
                     {"--cluster", "127.0.0.1:" + std::to_string(cluster_port), "--keys", keys_path,
                      "--key", admin.id, "--executor-key", "remote_sim"},
                     {}, prefix + "-victim.log");
  std::string marker = "(session actor ";
  bool up = false;
  for (auto end = steady_clock::now() + 20s; !up && steady_clock::now() < end;) {
    up = contains(victim.log(), marker);
    if (!up)
      std::this_thread::sleep_for(100ms);
  }
  BOOST_REQUIRE_MESSAGE(up, victim.log() << "\n" << server->log());
  auto log = victim.log();
  auto victim_id =
      static_cast<caf::actor_id>(std::stoull(log.substr(log.find(marker) + marker.size())));

  // The attacker: another process (this one) holding only a creator key.
  // Two actor systems of one process share a CAF node id, so the attacker
  // is this process's only one talking to the door.
  auto own = session(creator);
  auto created = own->create(create_body("attacker-1"));
  BOOST_REQUIRE_MESSAGE(created.status == 201, created.body);
  auto id = test::json_field(created.body, "id");
  auto audits = count("SELECT count(*) FROM audit_outbox");
  auto node = own->session_address().node();
  caf::scoped_actor self{sys()};
  auto me = caf::actor_cast<caf::actor>(self);
  auto ask = [&](const caf::actor& target, auto&&... xs) {
    std::pair<int, std::string> out{-1, ""};
    self->request(target, 10s, std::forward<decltype(xs)>(xs)...)
        .receive(
            [&](int32_t status, std::string& body) {
              out = {status, std::move(body)};
            },
            [&](caf::error& e) {
              out = {-1, sys().render(e)};
            });
    return out;
  };

  // Knowing the victim session's id: the protocol before session tokens,
  // no token, a guessed one — 401 each, for approve, subscribe, register.
  auto target = test::forge_handle(sys(), node, victim_id);
  auto body = std::string(R"({"approver_id": "evil"})");
  auto provider = cluster::spawn_executor_actor(sys(), nullptr);
  auto evil_provider = caf::actor_cast<caf::actor>(provider);
  // Stopped however the test ends: the actor system's end waits for it.
  std::shared_ptr<void> stop_provider(
      nullptr, [&](void*) { caf::anon_send_exit(provider, caf::exit_reason::user_shutdown); });
  for (auto& r :
       {ask(target, actors::approve_atom::value, id, body),
        ask(target, actors::approve_atom::value, std::string(), id, body),
        ask(target, actors::approve_atom::value, guessed_token(), id, body),
        ask(target, actors::subscribe_atom::value, guessed_token(), std::string(), std::string(),
            me),
        ask(target, actors::subscribe_atom::value, std::string(), std::string(), me),
        ask(target, actors::get_atom::value, guessed_token(), id),
        ask(target, actors::reg_exec_atom::value, guessed_token(), std::string("sim_evil"),
            evil_provider),
        ask(target, actors::reg_exec_atom::value, std::string("sim_evil"), evil_provider)}) {
    BOOST_TEST(r.first == 401, r.second);
    BOOST_TEST(contains(r.second, "bad session token"), r.second);
  }

  // Guessing: every id up to well past the victim's, with the messages the
  // sessions and the event fan-out understood before tokens. The fan-out's
  // id was never sent to a peer, so nothing reaches it.
  // A forged handle tells the broker to forget the real proxy of its id
  // when it goes: keep them until the end of the test.
  std::vector<caf::actor> forged;
  for (caf::actor_id guess = 1; guess < victim_id + 300; ++guess) {
    auto& h = forged.emplace_back(test::forge_handle(sys(), node, guess));
    self->send(h, actors::subscribe_atom::value, std::string(), std::string(), me);
    self->send(h, actors::approve_atom::value, id, body);
    self->send(h, actors::reg_exec_atom::value, std::string("sim_evil"), evil_provider);
  }
  // The scan's three messages to the victim's and the attacker's own
  // session are refused and logged, as the eight above.
  bool logged = false;
  for (auto end = steady_clock::now() + 15s; !logged && steady_clock::now() < end;) {
    logged = occurrences(server->log(), "cluster session refused: bad session token") >= 8 + 6;
    if (!logged)
      std::this_thread::sleep_for(100ms);
  }
  BOOST_TEST(logged, server->log());

  // Nothing changed: still waiting for an approval, no audit row, nothing
  // registered but the victim's own executor, nobody subscribed.
  BOOST_TEST(server->running());
  BOOST_TEST(scalar("SELECT request_state FROM movement_requests WHERE id = '" + id + "'") ==
             "PENDING_APPROVAL");
  BOOST_TEST(count("SELECT count(*) FROM movement_requests") == 1);
  BOOST_TEST(count("SELECT count(*) FROM audit_outbox") == audits);
  BOOST_TEST(occurrences(server->log(), "remote provider registered") == 1);
  BOOST_TEST(!contains(server->log(), "sim_evil\",\"kind"));
  BOOST_TEST(test::json_field(own->api_status(), "subscribers") == "0");

  // A real approval (over HTTP) completes it; no event reaches the attacker.
  auto approved =
      client(approver).post("/v3/movements/" + id + "/approve", R"({"approver_id": "e2e"})");
  BOOST_TEST(approved.status == 200, approved.body);
  BOOST_TEST(wait_state(id, "COMPLETED"));
  int leaked = 0;
  for (bool quiet = false; !quiet;)
    self->receive(
        [&](actors::event_atom, std::string&, std::string&, uint64_t, std::string&) { ++leaked; },
        caf::after(2s) >> [&] { quiet = true; });
  BOOST_TEST(leaked == 0);
  BOOST_TEST(victim.running());
}

BOOST_FIXTURE_TEST_CASE(a_login_flood_is_throttled_and_a_sibling_completes, session_token_fixture) {
  start_serve();
  // The legitimate sibling, logged in before the flood, follows a ~15 s
  // movement by pushed events throughout.
  test::child sibling(std::string(MG_BINARY_DIR) + "/movegate-sibling",
                      {"--cluster", "127.0.0.1:" + std::to_string(cluster_port), "--keys",
                       keys_path, "--creator", creator.id, "--approver", approver.id, "--template",
                       "cl_slow", "--amount", "5", "--input", R"({"to": "0xabc"})", "--timeout",
                       "90", "--follow", "events"},
                      {}, prefix + "-sibling.log");
  bool approved = false;
  for (auto end = steady_clock::now() + 30s; !approved && steady_clock::now() < end;) {
    approved = contains(sibling.log(), "approved ");
    if (!approved)
      std::this_thread::sleep_for(100ms);
  }
  BOOST_REQUIRE_MESSAGE(approved, sibling.log() << "\n" << server->log());
  auto steady = session(reader);
  int before = threads_of(server->pid());
  BOOST_TEST_MESSAGE("serve threads before the flood: " << before);

  // 1000 logins from one peer address: odd ones with a bad signature, even
  // ones good (the reader key, whose sessions stay alive as this client).
  cluster::movement_client flood(sys(), 10s);
  flood.connect("127.0.0.1", static_cast<uint16_t>(cluster_port));
  int ok = 0, unauthorized = 0, throttled = 0, other = 0, peak = before;
  auto started = steady_clock::now();
  for (int i = 0; i < 1000; ++i) {
    auto now = static_cast<uint64_t>(
        duration_cast<seconds>(system_clock::now().time_since_epoch()).count());
    auto nonce = cluster::random_nonce();
    auto proof = api::sign_cluster_login(i % 2 ? "wrong-secret" : reader.secret, reader.id,
                                         std::to_string(now), nonce);
    auto why = error_of([&] { flood.login_with(reader.id, now, nonce, proof); });
    if (why.empty())
      ++ok;
    else if (contains(why, "(401)"))
      ++unauthorized;
    else if (contains(why, "(429)"))
      ++throttled;
    else
      ++other;
    if (i % 50 == 0) {
      peak = std::max(peak, threads_of(server->pid()));
      // The established session keeps answering throughout.
      BOOST_TEST(steady->list("limit=1").status == 200);
    }
  }
  double took = duration<double>(steady_clock::now() - started).count();
  peak = std::max(peak, threads_of(server->pid()));
  BOOST_TEST_MESSAGE("1000 logins in " << took << " s: " << ok << " ok, " << unauthorized
                                       << " 401, " << throttled << " 429, " << other
                                       << " other; threads " << before << " -> peak " << peak);
  BOOST_TEST(other == 0);
  // At most MG_CLUSTER_MAX_SESSIONS_PER_KEY sessions, whatever the flood.
  BOOST_TEST(ok <= 16);
  BOOST_TEST(ok >= 1);
  // Failed proofs: a burst of 10, then one a second.
  BOOST_TEST(unauthorized <= 10 + static_cast<int>(took) + 2);
  BOOST_TEST(throttled >= 1000 - 16 - (10 + static_cast<int>(took) + 2));
  // One thread per live session at most (sessions are detached actors).
  BOOST_TEST(peak <= before + 16 + 8);
  BOOST_TEST(contains(server->log(), "too many failed logins from 127.0.0.1"));

  // The sibling's movement completes regardless.
  BOOST_TEST(sibling.wait(90s) == 0, sibling.log() << "\n" << server->log());
  BOOST_TEST(contains(sibling.log(), "state COMPLETED"), sibling.log());
  BOOST_TEST(server->running());
}

BOOST_FIXTURE_TEST_CASE(the_17th_live_session_of_a_key_is_refused_until_one_ends,
                        session_token_fixture) {
  start_serve();
  std::vector<std::unique_ptr<cluster::movement_client>> held;
  for (int i = 0; i < 16; ++i)
    held.push_back(session(reader));
  cluster::movement_client extra(sys(), 10s);
  extra.connect("127.0.0.1", static_cast<uint16_t>(cluster_port));
  auto why = error_of([&] { extra.login(reader.id, reader.secret); });
  BOOST_TEST(contains(why, "(429)"), why);
  BOOST_TEST(contains(why, "MG_CLUSTER_MAX_SESSIONS_PER_KEY"), why);
  // Another key is not affected, and the 16 sessions all work.
  BOOST_TEST(session(creator)->list().status == 200);
  for (auto& c : held)
    BOOST_TEST(c->list("limit=1").status == 200);
  // One ends (its client goes away): a place is free again.
  held.pop_back();
  bool in = false;
  for (auto end = steady_clock::now() + 10s; !in && steady_clock::now() < end;) {
    in = error_of([&] { extra.login(reader.id, reader.secret); }).empty();
    if (!in)
      std::this_thread::sleep_for(200ms);
  }
  BOOST_TEST(in, server->log());
  BOOST_TEST(extra.list().status == 200);
}

BOOST_FIXTURE_TEST_CASE(the_session_limit_is_the_setting, session_token_fixture) {
  start_serve({{"MG_CLUSTER_MAX_SESSIONS_PER_KEY", "2"}});
  auto a = session(reader);
  auto b = session(reader);
  cluster::movement_client c(sys(), 10s);
  c.connect("127.0.0.1", static_cast<uint16_t>(cluster_port));
  auto why = error_of([&] { c.login(reader.id, reader.secret); });
  BOOST_TEST(contains(why, "key holds 2 live sessions"), why);
}

BOOST_AUTO_TEST_SUITE_END()
