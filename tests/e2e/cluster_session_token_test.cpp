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
#include <caf/forwarding_actor_proxy.hpp>
#include <caf/io/all.hpp>
#include <caf/io/basp_broker.hpp>
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

const key admin{"admin", "ad000000ad000000ad000000ad000000", R"(["admin", "read"])"};

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

/// A handle for actor `id` of `node`, made the way the middleman makes one
/// when an actor address arrives: any peer connected to `node` can do this
/// for any id, whether it was ever told that id or not.
caf::actor forge_handle(caf::actor_system& sys, const caf::node_id& node, caf::actor_id id) {
  auto broker = sys.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP"));
  caf::actor_config cfg;
  auto proxy = caf::make_actor<caf::forwarding_actor_proxy, caf::strong_actor_ptr>(id, node, &sys,
                                                                                   cfg, broker);
  return caf::actor_cast<caf::actor>(proxy);
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

  /// An attacker: another CAF node connected to the cluster door.
  struct attacker {
    test::client_system node;
    caf::scoped_actor self{*node.sys};
    explicit attacker(int port) {
      auto api = node.sys->middleman().remote_actor<actors::movement_api_actor>(
          "127.0.0.1", static_cast<uint16_t>(port));
      BOOST_REQUIRE_MESSAGE(api, "attacker cannot reach the door");
    }
    /// The (status, body) `target` answers `msg` with; status -1 when it
    /// answers with an error or not within `timeout`.
    template <class... Ts>
    std::pair<int, std::string> ask(const caf::actor& target, milliseconds timeout, Ts&&... xs) {
      std::pair<int, std::string> out{-1, ""};
      self->request(target, timeout, std::forward<Ts>(xs)...)
          .receive(
              [&](int32_t status, std::string& body) {
                out = {status, std::move(body)};
              },
              [&](caf::error& e) {
                out = {-1, node.sys->render(e)};
              });
      return out;
    }
  };

  /// A 64-hex-character token that is nobody's.
  static std::string guessed_token() { return std::string(64, 'a'); }
};

} // namespace

BOOST_AUTO_TEST_SUITE(cluster_session_token)

BOOST_FIXTURE_TEST_CASE(
    a_peer_with_another_sessions_handle_cannot_approve_create_subscribe_or_register,
    session_token_fixture) {
  start_serve();
  // The victims: an approver's, a creator's and an admin's live sessions,
  // and a reader subscribed to every event.
  auto creating = session(creator);
  auto approving = session(approver);
  auto administering = session(admin);
  auto watching = session(reader);
  BOOST_REQUIRE(watching->subscribe("").status == 200);
  auto created = creating->create(create_body("victim-1"));
  BOOST_REQUIRE_MESSAGE(created.status == 201, created.body);
  auto id = test::json_field(created.body, "id");
  BOOST_REQUIRE(scalar("SELECT request_state FROM movement_requests") == "PENDING_APPROVAL");
  auto audits = count("SELECT count(*) FROM audit_outbox");

  attacker evil(cluster_port);
  auto node = approving->session_address().node();
  auto approver_session = forge_handle(*evil.node.sys, node, approving->session_address().id());
  auto creator_session = forge_handle(*evil.node.sys, node, creating->session_address().id());
  auto admin_session = forge_handle(*evil.node.sys, node, administering->session_address().id());
  auto me = caf::actor_cast<caf::actor>(evil.self);

  // The protocol before session tokens, no token, a guessed one: 401 each.
  auto body = std::string(R"({"approver_id": "evil"})");
  for (auto& r :
       {evil.ask(approver_session, 10s, actors::approve_atom::value, id, body),
        evil.ask(approver_session, 10s, actors::approve_atom::value, std::string(), id, body),
        evil.ask(approver_session, 10s, actors::approve_atom::value, guessed_token(), id, body),
        evil.ask(creator_session, 10s, actors::create_atom::value, guessed_token(),
                 create_body("evil-1")),
        evil.ask(creator_session, 10s, actors::create_atom::value, create_body("evil-2")),
        evil.ask(approver_session, 10s, actors::subscribe_atom::value, guessed_token(),
                 std::string(), std::string(), me),
        evil.ask(approver_session, 10s, actors::subscribe_atom::value, std::string(), std::string(),
                 me),
        evil.ask(approver_session, 10s, actors::get_atom::value, guessed_token(), id)}) {
    BOOST_TEST(r.first == 401, r.second);
    BOOST_TEST(contains(r.second, "bad session token"), r.second);
  }
  auto provider = cluster::spawn_executor_actor(*evil.node.sys, nullptr);
  auto reg = evil.ask(admin_session, 10s, actors::reg_exec_atom::value, guessed_token(),
                      std::string("sim_evil"), caf::actor_cast<caf::actor>(provider));
  BOOST_TEST(reg.first == 401, reg.second);

  // Guessing: every id up to well past the highest one seen, with the
  // messages the sessions and the event fan-out understood before tokens.
  // An id of an actor never sent to a peer (the fan-out's) reaches nothing.
  auto highest = std::max({approving->session_address().id(), creating->session_address().id(),
                           administering->session_address().id()});
  for (caf::actor_id guess = 1; guess < highest + 200; ++guess) {
    auto h = forge_handle(*evil.node.sys, node, guess);
    evil.self->send(h, actors::subscribe_atom::value, std::string(), std::string(), me);
    evil.self->send(h, actors::approve_atom::value, id, body);
    evil.self->send(h, actors::reg_exec_atom::value, std::string("sim_evil"), me);
  }

  // Nothing changed: still waiting for an approval, no audit row, nothing
  // registered; each refusal logged.
  BOOST_TEST(server->running());
  BOOST_TEST(scalar("SELECT request_state FROM movement_requests WHERE id = '" + id + "'") ==
             "PENDING_APPROVAL");
  BOOST_TEST(count("SELECT count(*) FROM movement_requests") == 1);
  BOOST_TEST(count("SELECT count(*) FROM audit_outbox") == audits);
  BOOST_TEST(!contains(server->log(), "remote provider registered"));
  // The scan's messages to the sessions are refused too (3 sessions × 3
  // messages, plus the 9 asked above).
  bool logged = false;
  for (auto end = steady_clock::now() + 15s; !logged && steady_clock::now() < end;) {
    logged = occurrences(server->log(), "cluster session refused: bad session token") >= 9 + 9;
    if (!logged)
      std::this_thread::sleep_for(100ms);
  }
  BOOST_TEST(logged, server->log());

  // The real approver still can; its events reach the real subscriber and
  // none reaches the attacker, whichever actor it subscribed to.
  auto approved = approving->approve(id, R"({"approver_id": "e2e"})");
  BOOST_TEST(approved.status == 200, approved.body);
  BOOST_TEST(wait_state(id, "COMPLETED"));
  int seen = 0;
  while (auto e = watching->next_event(2s))
    seen += e->request_id == id;
  BOOST_TEST(seen >= 3);
  int leaked = 0;
  for (bool quiet = false; !quiet;)
    evil.self->receive(
        [&](actors::event_atom, std::string&, std::string&, uint64_t, std::string&) { ++leaked; },
        caf::after(2s) >> [&] { quiet = true; });
  BOOST_TEST(leaked == 0);
  BOOST_TEST(count("SELECT count(*) FROM audit_outbox WHERE actor = 'approver'") == 1);
  caf::anon_send_exit(provider, caf::exit_reason::user_shutdown);
}

BOOST_FIXTURE_TEST_CASE(
    a_flood_of_logins_is_throttled_with_bounded_threads_while_a_sibling_completes,
    session_token_fixture) {
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
