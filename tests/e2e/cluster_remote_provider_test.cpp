// Remote providers (issue 6) against a real `movegate serve`: a sibling's
// actor registered as executor "remote_sim" runs a movement to COMPLETED;
// one that never answers submit sends the node to UNKNOWN within
// MG_EXECUTOR_TIMEOUT_SECONDS while the dispatcher keeps working; a prepare
// that is never signed is abandoned on the sibling; the
// example sibling process offers an executor, registers again after movegate
// restarts and stops cleanly; a killed
// sibling's key is unregistered; registering needs scope admin.
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <mutex>
#include <thread>

#include "actors/cluster/movement_client.hpp"
#include "actors/cluster/provider_actor.hpp"
#include "build_paths.hpp"
#include "domain/hash.hpp"
#include "domain/provider_json.hpp"
#include "tests/support/cluster_fixture.hpp"
#include "tests/support/process.hpp"

using namespace mg;
using namespace std::chrono;
using namespace std::chrono_literals;

namespace {

using key = test::api_key_spec;

const key admin{"sib-admin", "ad00ad00ad00ad00ad00ad00ad00ad00", R"(["admin", "read"])"};
const key reader{"sib-reader", "4ead004ead004ead004ead004ead0001", R"(["read", "create"])"};

const char* remote_template = R"({"template_key": "rp_one", "version": 1,
    "nodes": [{"node_key": "send", "action_type": "chain_transfer",
               "executor_key": "remote_sim", "side_effect": true, "config": {}}],
    "edges": []})";
const char* unsignable_template = R"({"template_key": "rp_unsignable", "version": 1,
    "nodes": [{"node_key": "send", "action_type": "chain_transfer",
               "executor_key": "remote_sim", "side_effect": true,
               "signing_required": true, "signer_key": "nosuch", "config": {}}],
    "edges": []})";
const char* sim_template = R"({"template_key": "rp_sim", "version": 1,
    "nodes": [{"node_key": "send", "action_type": "chain_transfer",
               "executor_key": "sim", "side_effect": true, "config": {}}],
    "edges": []})";

/// Always succeeds: submit accepts, observe completes; counts submits and
/// keeps what it was told to abandon.
struct always_succeeds : domain::executor {
  std::atomic<int> submits{0};
  std::mutex mutex;
  std::vector<std::string> abandoned; // "<idempotency key> <payload>"
  std::optional<domain::step_result> preflight(const domain::execution_context&) override {
    return std::nullopt;
  }
  std::optional<domain::prepared_action> prepare(const domain::execution_context& ctx) override {
    domain::prepared_action a;
    a.action_type = ctx.action_type;
    a.payload = "{\"key\":" + std::to_string(ctx.attempt_no) + "}";
    a.payload_hash = domain::sha256_hex(a.payload);
    return a;
  }
  domain::step_result submit(const domain::execution_context& ctx, const domain::prepared_action&,
                             const domain::sign_result*) override {
    ++submits;
    domain::step_result r;
    r.next_state = domain::node_state::submitted;
    r.provider_refs = "{\"remote_ref\":\"" + ctx.idempotency_key + "\"}";
    r.provider_ref_id = "remote-" + ctx.idempotency_key;
    r.retry_after_seconds = 0.0;
    return r;
  }
  domain::step_result observe(const domain::execution_context&) override {
    domain::step_result r;
    r.next_state = domain::node_state::completed;
    return r;
  }
  domain::recover_result recover(const domain::execution_context&) override { return {}; }
  domain::health_result health() override { return {}; }
  void abandon(const domain::execution_context& ctx, const domain::prepared_action& a) override {
    std::lock_guard<std::mutex> lock(mutex);
    abandoned.push_back(ctx.idempotency_key + " " + a.payload);
  }
  std::vector<std::string> abandoned_so_far() {
    std::lock_guard<std::mutex> lock(mutex);
    return abandoned;
  }
};

/// Answers everything but submit, whose promises it keeps forever.
struct silent_state {
  std::vector<caf::typed_response_promise<std::string>> pending;
  int submits = 0;
};

actors::remote_executor_actor::behavior_type
never_answers_submit(actors::remote_executor_actor::stateful_pointer<silent_state> self) {
  return {
      [](actors::preflight_atom, const std::string&) { return std::string("null"); },
      [](actors::prepare_atom, const std::string&) {
        domain::prepared_action a{"chain_transfer", "json", "{}", domain::sha256_hex("{}")};
        return domain::to_json(a);
      },
      [self](actors::submit_atom, const std::string&, const std::string&, const std::string&) {
        ++self->state.submits;
        auto rp = self->make_response_promise<std::string>();
        self->state.pending.push_back(rp);
        return rp;
      },
      [](actors::observe_atom, const std::string&) {
        domain::step_result r;
        r.next_state = domain::node_state::observing;
        return domain::to_json(r);
      },
      // The key's fate stays unknown, so the node stays UNKNOWN.
      [](actors::recover_atom, const std::string&) {
        return domain::to_json(domain::recover_result{});
      },
      [](actors::health_atom) { return domain::to_json(domain::health_result{}); },
      [](actors::abandon_atom, const std::string&, const std::string&) {
        return std::string("{}");
      },
  };
}

struct remote_fixture : test::cluster_serve_fixture {
  std::vector<caf::actor> providers; // stopped before the actor system ends

  remote_fixture() {
    add_template(remote_template);
    add_template(sim_template);
    add_template(unsignable_template);
    keys = {admin, reader};
  }
  ~remote_fixture() {
    for (auto& p : providers)
      caf::anon_send_exit(p, caf::exit_reason::kill);
    providers.clear();
    stop();
  }

  void start_serve(std::map<std::string, std::string> extra = {}) {
    start_cluster("e2e-remote", std::move(extra));
  }

  std::unique_ptr<cluster::movement_client> session(caf::actor_system& s, const key& k) {
    return cluster_serve_fixture::session(k, 10s, &s);
  }

  bool request_in(const std::string& id, const std::string& state, milliseconds timeout) {
    return wait_for("SELECT request_state = '" + state + "' FROM movement_requests WHERE id = '" +
                        id + "'",
                    timeout);
  }
  bool node_in(const std::string& id, const std::string& state, milliseconds timeout) {
    return wait_for("SELECT node_state = '" + state +
                        "' FROM movement_request_nodes WHERE request_id = '" + id + "'",
                    timeout);
  }
  /// The example sibling (app/sibling_executor_example.cpp) offering its
  /// toy executor as "remote_sim", once it says it is registered.
  std::unique_ptr<test::child> start_sibling_executor() {
    auto sibling = std::make_unique<test::child>(
        std::string(MG_BINARY_DIR) + "/movegate-sibling-executor",
        std::vector<std::string>{"--cluster", "127.0.0.1:" + std::to_string(cluster_port), "--keys",
                                 keys_path, "--key", admin.id, "--executor-key", "remote_sim"},
        std::map<std::string, std::string>{}, prefix + "-sibling-executor.log");
    BOOST_REQUIRE_MESSAGE(logged(*sibling, "offering executor remote_sim", 1, 10s), sibling->log());
    return sibling;
  }
  /// `text` appears at least `times` times in `c`'s log within `timeout`.
  static bool logged(test::child& c, const std::string& text, int times, milliseconds timeout) {
    for (auto end = steady_clock::now() + timeout; steady_clock::now() < end;) {
      auto log = c.log();
      int n = 0;
      for (auto at = log.find(text); at != std::string::npos; at = log.find(text, at + 1))
        ++n;
      if (n >= times)
        return true;
      std::this_thread::sleep_for(100ms);
    }
    return false;
  }
  bool server_logged(const std::string& text, milliseconds timeout) {
    return logged(*server, text, 1, timeout);
  }
  std::string node_column(const std::string& id, const std::string& column) {
    return scalar("SELECT " + column + " FROM movement_request_nodes WHERE request_id = '" + id +
                  "'");
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(cluster_remote_provider)

BOOST_FIXTURE_TEST_CASE(remote_executor_runs_a_movement_to_completed, remote_fixture) {
  start_serve({{"MG_EXECUTOR_HEALTH_INTERVAL_SECONDS", "0.2"}});
  auto c = session(sys(), admin);
  auto impl = std::make_shared<always_succeeds>();
  auto actor = cluster::spawn_executor_actor(sys(), impl);
  providers.push_back(caf::actor_cast<caf::actor>(actor));
  auto r = c->register_executor("remote_sim", actor);
  BOOST_TEST(r.status == 200, r.body);
  // A sibling cannot take over a local provider's key.
  BOOST_TEST(c->register_executor("sim", actor).status == 409);

  auto id = create_and_approve("rp_one");
  BOOST_TEST(request_in(id, "COMPLETED", 20s), server->log());
  BOOST_TEST(impl->submits.load() == 1);
  BOOST_TEST(node_column(id, "provider_ref_id").rfind("remote-", 0) == 0);
  // executor_health asks the remote one too (its health() over the door).
  BOOST_TEST(wait_for("SELECT count(*) = 1 FROM executors WHERE executor_key = 'remote_sim'"
                      " AND health_state = 'up'",
                      5s));
}

BOOST_FIXTURE_TEST_CASE(a_prepare_that_is_never_signed_is_abandoned_on_the_sibling,
                        remote_fixture) {
  start_serve();
  auto c = session(sys(), admin);
  auto impl = std::make_shared<always_succeeds>();
  auto actor = cluster::spawn_executor_actor(sys(), impl);
  providers.push_back(caf::actor_cast<caf::actor>(actor));
  BOOST_TEST(c->register_executor("remote_sim", actor).status == 200);
  // The node names a signer nobody offers: prepared, then refused.
  auto id = create_and_approve("rp_unsignable");
  BOOST_TEST(node_in(id, "FAILED", 15s), server->log());
  BOOST_TEST(node_column(id, "error_code") == "SIGNER_NOT_FOUND");
  std::vector<std::string> abandoned;
  for (int i = 0; i < 50 && abandoned.empty(); ++i, std::this_thread::sleep_for(100ms))
    abandoned = impl->abandoned_so_far();
  BOOST_TEST(abandoned == std::vector<std::string>{node_column(id, "id") + ":1 {\"key\":1}"});
  BOOST_TEST(impl->submits.load() == 0);
}

BOOST_FIXTURE_TEST_CASE(unanswered_submit_goes_unknown_and_dispatcher_keeps_working,
                        remote_fixture) {
  start_serve({{"MG_EXECUTOR_TIMEOUT_SECONDS", "1"}});
  auto c = session(sys(), admin);
  auto silent = sys().spawn(never_answers_submit);
  providers.push_back(caf::actor_cast<caf::actor>(silent));
  BOOST_TEST(c->register_executor("remote_sim", silent).status == 200);

  auto start = steady_clock::now();
  auto stuck = create_and_approve("rp_one");
  auto other = create_and_approve("rp_sim");
  // Submit waited at most the 1 s timeout, then the recovery path owns it.
  BOOST_TEST(node_in(stuck, "UNKNOWN", 10s), server->log());
  BOOST_TEST(node_column(stuck, "error_code") == "SUBMIT_ERROR");
  BOOST_TEST(request_in(other, "COMPLETED", 15s), server->log());
  BOOST_TEST(duration_cast<seconds>(steady_clock::now() - start).count() < 15);
  // And a movement created after it still runs.
  auto later = create_and_approve("rp_sim");
  BOOST_TEST(request_in(later, "COMPLETED", 15s), server->log());
}

BOOST_FIXTURE_TEST_CASE(example_sibling_offers_an_executor_and_stops_cleanly, remote_fixture) {
  start_serve();
  auto sibling = start_sibling_executor();
  auto id = create_and_approve("rp_one");
  BOOST_TEST(request_in(id, "COMPLETED", 20s), server->log() << sibling->log());
  BOOST_TEST(node_column(id, "provider_ref_id").rfind("toy-", 0) == 0);
  BOOST_TEST(sibling->log().find("submit " + node_column(id, "id") + ":1") != std::string::npos,
             sibling->log());
  // SIGTERM: it stops its provider, leaves the cluster and exits 0.
  sibling->signal(SIGTERM);
  BOOST_TEST(sibling->wait(10s) == 0, sibling->log());
  BOOST_TEST(server_logged("remote provider unregistered", 15s), server->log());
}

BOOST_FIXTURE_TEST_CASE(example_sibling_registers_again_when_movegate_restarts, remote_fixture) {
  start_serve();
  auto sibling = start_sibling_executor();
  stop();
  BOOST_TEST(logged(*sibling, "lost the session to movegate; registering again", 1, 15s),
             sibling->log());
  // While movegate is down it keeps trying; once it is back (same door) it
  // registers again by itself and runs the next movement.
  std::this_thread::sleep_for(1s);
  start_on_cluster_port("e2e-remote");
  BOOST_TEST(logged(*sibling, "offering executor remote_sim", 2, 20s), sibling->log());
  BOOST_TEST(sibling->log().find("trying again in") != std::string::npos, sibling->log());
  auto id = create_and_approve("rp_one");
  BOOST_TEST(request_in(id, "COMPLETED", 20s), server->log() << sibling->log());
  BOOST_TEST(sibling->running());
}

BOOST_FIXTURE_TEST_CASE(dead_sibling_is_unregistered_and_dispatch_fails_not_found, remote_fixture) {
  start_serve();
  // The sibling process goes away without a goodbye.
  auto sibling = start_sibling_executor();
  sibling->signal(SIGKILL);
  BOOST_TEST(sibling->wait(5s) == 128 + SIGKILL);
  // The server notices (its monitor fires) and drops the key.
  BOOST_TEST(server_logged("remote provider unregistered", 15s), server->log());
  // The existing rule for an unknown executor key: the node FAILs.
  auto id = create_and_approve("rp_one");
  BOOST_TEST(node_in(id, "FAILED", 15s), server->log());
  BOOST_TEST(node_column(id, "error_code") == "EXECUTOR_NOT_FOUND");
  // The key is free again for a live sibling.
  auto next = start_sibling_executor();
  BOOST_TEST(next->running(), next->log());
}

BOOST_FIXTURE_TEST_CASE(key_without_admin_scope_cannot_register, remote_fixture) {
  start_serve();
  auto c = session(sys(), reader);
  auto impl = std::make_shared<always_succeeds>();
  auto actor = cluster::spawn_executor_actor(sys(), impl);
  providers.push_back(caf::actor_cast<caf::actor>(actor));
  auto r = c->register_executor("remote_sim", actor);
  BOOST_TEST(r.status == 403, r.body);
  BOOST_TEST(r.body.find("admin") != std::string::npos, r.body);
  // Nothing was registered: a movement on that key FAILs, the executor
  // never saw a call.
  auto id = create_and_approve("rp_one");
  BOOST_TEST(node_in(id, "FAILED", 15s), server->log());
  BOOST_TEST(node_column(id, "error_code") == "EXECUTOR_NOT_FOUND");
  BOOST_TEST(impl->submits.load() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
