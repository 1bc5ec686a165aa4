// The request writer on the real database: it gathers what arrives while a
// flush is in flight into one transaction, passes over request rows another
// transaction holds (they go to a later flush), retries a batch a deadlock
// broke, and lets a request that fails on its own fail alone.
#include <boost/test/unit_test.hpp>

#include <thread>

#include "actors/request_writer.hpp"
#include "actors/system_config.hpp"
#include "actors/workers/node_result.hpp"
#include "domain/json.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

using reply_handle = decltype(std::declval<caf::scoped_actor&>()->request(
    std::declval<actors::request_writer_actor&>(), caf::infinite, actors::reconcile_atom::value,
    std::string()));

struct writer_fixture : test::db_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<caf::scoped_actor> self;
  actors::request_writer_actor writer;
  std::unique_ptr<pqxx::connection> holding; // a third party's transaction

  writer_fixture() {
    holding = db::connect(url);
    add_template(R"({"template_key": "pair", "version": 1, "nodes": [
      {"node_key": "a", "action_type": "chain_transfer", "executor_key": "sim"},
      {"node_key": "b", "action_type": "chain_transfer", "executor_key": "sim"}],
      "edges": [["a", "b"]]})");
    actors::configure(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
    self = std::make_unique<caf::scoped_actor>(*sys);
    writer = sys->spawn<caf::detached>(actors::request_writer, ctx, url,
                                       std::make_shared<actors::runtime_links>(), false);
  }

  ~writer_fixture() {
    (*self)->send_exit(writer, caf::exit_reason::user_shutdown);
    writer = nullptr;
    self.reset();
    sys.reset();
  }

  /// An executing request whose node a completed by a path that left the
  /// reconcile to its movement actor: reconciling it makes b READY.
  std::string awaiting_reconcile() {
    auto id = create_and_approve("pair");
    exec("UPDATE movement_requests SET request_state = 'EXECUTING', needs_reconcile = true"
         " WHERE id = '" +
         id + "'");
    exec("UPDATE movement_request_nodes SET node_state = 'COMPLETED' WHERE request_id = '" + id +
         "' AND node_key = 'a'");
    return id;
  }

  bool reconciled(const std::string& id) {
    return node_state(id, "b") == "READY" && !snapshot(id).needs_reconcile;
  }

  /// An executing request whose node a was submitted and is due for
  /// observation.
  std::string observable() {
    auto id = create_and_approve("pair");
    exec("UPDATE movement_requests SET request_state = 'EXECUTING' WHERE id = '" + id + "'");
    exec("UPDATE movement_request_nodes SET node_state = 'SUBMITTED', attempt_no = 1,"
         " claim_token = gen_random_uuid(), next_observe_at = now() WHERE request_id = '" +
         id + "' AND node_key = 'a'");
    return id;
  }

  /// Node a of `id` claimed by an observer (claim then rolled back) and
  /// observed COMPLETED.
  actors::handed_result_ptr completion_of(const std::string& id) {
    auto a = scalar("SELECT id FROM movement_request_nodes WHERE request_id = '" + id +
                    "' AND node_key = 'a'");
    pqxx::work tx(*other);
    auto n =
        db::claim_for_observe(tx, a, settings.network_class, db::claim_scope::first_in_transaction);
    tx.abort();
    BOOST_REQUIRE(n.has_value());
    auto r = std::make_shared<workers::handed_result>(
        workers::handed_result{*n, {}, db::event_batch(id, settings.callback_max_attempts)});
    r->update.next_state = domain::node_state::completed;
    r->update.observed = true;
    return r;
  }

  reply_handle hand(const actors::handed_result_ptr& r) {
    return (*self)->request(writer, 30s, actors::result_atom::value, r);
  }

  reply_handle ask(const std::string& id) {
    return (*self)->request(writer, 30s, actors::reconcile_atom::value, id);
  }

  /// The answer: "changed", "unchanged" or "error: …".
  static std::string answer_of(reply_handle& h) {
    std::string out = "no answer";
    h.receive([&](bool changed) { out = changed ? "changed" : "unchanged"; },
              [&](const caf::error& err) { out = "error: " + caf::to_string(err); });
    return out;
  }

  long status(const char* key) {
    long out = -1;
    (*self)
        ->request(writer, 10s, actors::status_atom::value)
        .receive([&](const std::string& s) { out = (*json::parse(s))[key].GetInt64(); },
                 [&](const caf::error&) {});
    return out;
  }

  /// The writer's connection waits for a row lock.
  bool writer_waits_on_a_lock() {
    return wait_for("SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname ="
                    " current_database() AND application_name = 'movegate:request_writer'"
                    " AND wait_event_type = 'Lock')",
                    15s);
  }

  /// Locks node b of `id` on the holding connection: a flush that includes
  /// `id` then waits for `holder` to end.
  std::unique_ptr<pqxx::work> hold_node_b(const std::string& id) {
    auto holder = std::make_unique<pqxx::work>(*holding);
    holder->exec("SELECT 1 FROM movement_request_nodes WHERE request_id = '" + id +
                 "' AND node_key = 'b' FOR UPDATE");
    return holder;
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(request_writer)

BOOST_FIXTURE_TEST_CASE(what_arrives_during_a_flush_is_written_by_the_next_in_one_commit,
                        writer_fixture) {
  auto first = awaiting_reconcile();
  std::vector<std::string> gathered{awaiting_reconcile(), awaiting_reconcile(),
                                    awaiting_reconcile()};
  auto holder = hold_node_b(first);
  auto first_reply = ask(first);
  BOOST_REQUIRE(writer_waits_on_a_lock());
  std::vector<reply_handle> replies;
  for (auto& id : gathered)
    replies.push_back(ask(id));
  holder->abort();
  BOOST_TEST(answer_of(first_reply) == "changed");
  for (auto& r : replies)
    BOOST_TEST(answer_of(r) == "changed");
  for (auto& id : gathered)
    BOOST_TEST(reconciled(id));
  // The lone first request flushed at once; the three that came while it
  // waited share the second flush and its single commit.
  BOOST_TEST(status("flushes") == 2);
  BOOST_TEST(status("commits") == 2);
  BOOST_TEST(status("pending") == 0);
}

// SPEC §1: each result is re-checked under the writer's lock against what
// its producer read at claim; a stale one is dropped alone and the rest of
// its batch lands in the same commit, each with its request's reconcile.
BOOST_FIXTURE_TEST_CASE(a_stale_result_is_dropped_and_the_rest_of_its_batch_lands, writer_fixture) {
  auto first = awaiting_reconcile();
  std::vector<std::string> ids{observable(), observable(), observable()};
  std::vector<actors::handed_result_ptr> results;
  for (auto& id : ids)
    results.push_back(completion_of(id));
  // Another observer's observation of the last node landed after its claim.
  exec("UPDATE movement_request_nodes SET observe_count = observe_count + 1 WHERE id = '" +
       results[2]->node.id + "'");
  auto holder = hold_node_b(first);
  auto first_reply = ask(first);
  BOOST_REQUIRE(writer_waits_on_a_lock());
  std::vector<reply_handle> replies;
  for (auto& r : results)
    replies.push_back(hand(r));
  holder->abort();
  BOOST_TEST(answer_of(first_reply) == "changed");
  BOOST_TEST(answer_of(replies[0]) == "changed"); // written
  BOOST_TEST(answer_of(replies[1]) == "changed");
  BOOST_TEST(answer_of(replies[2]) == "unchanged"); // stale: dropped
  for (int i = 0; i < 2; ++i) {
    BOOST_TEST(node_state(ids[i], "a") == "COMPLETED");
    BOOST_TEST(node_state(ids[i], "b") == "READY"); // reconciled in the same commit
  }
  BOOST_TEST(node_state(ids[2], "a") == "SUBMITTED");
  BOOST_TEST(node_state(ids[2], "b") == "BLOCKED");
  BOOST_TEST(status("flushes") == 2);
  BOOST_TEST(status("commits") == 2);
  BOOST_TEST(status("results") == 2);
  BOOST_TEST(status("stale") == 1);
}

BOOST_FIXTURE_TEST_CASE(a_request_another_transaction_holds_waits_and_the_others_go_on,
                        writer_fixture) {
  auto held = awaiting_reconcile();
  auto free = awaiting_reconcile();
  pqxx::work holder(*holding);
  holder.exec("SELECT 1 FROM movement_requests WHERE id = '" + held + "' FOR UPDATE");
  auto held_reply = ask(held);
  auto free_reply = ask(free);
  // Answered while the other request is still locked: the writer never
  // waits behind a claim.
  BOOST_TEST(answer_of(free_reply) == "changed");
  BOOST_TEST(reconciled(free));
  BOOST_TEST(snapshot(held).needs_reconcile);
  BOOST_TEST(node_state(held, "b") == "BLOCKED");
  holder.abort();
  BOOST_TEST(answer_of(held_reply) == "changed");
  BOOST_TEST(reconciled(held));
}

BOOST_FIXTURE_TEST_CASE(a_batch_a_deadlock_broke_is_retried, writer_fixture) {
  auto id = awaiting_reconcile();
  // The holder waits far longer than the writer before checking for a
  // deadlock, so the database breaks the writer's transaction.
  auto holder = std::make_unique<pqxx::work>(*holding);
  holder->exec("SET LOCAL deadlock_timeout = '60s'");
  holder->exec("SELECT 1 FROM movement_request_nodes WHERE request_id = '" + id +
               "' AND node_key = 'b' FOR UPDATE");
  auto reply = ask(id);
  BOOST_REQUIRE(writer_waits_on_a_lock());
  // The writer holds the request row and waits for node b; the holder now
  // waits for the request row: a cycle.
  std::thread closing([&] {
    holder->exec("SELECT 1 FROM movement_requests WHERE id = '" + id + "' FOR UPDATE");
    holder->commit();
  });
  closing.join();
  BOOST_TEST(answer_of(reply) == "changed");
  BOOST_TEST(reconciled(id));
  BOOST_TEST(status("retries") >= 1);
}

BOOST_FIXTURE_TEST_CASE(a_request_that_fails_on_its_own_fails_alone, writer_fixture) {
  auto first = awaiting_reconcile();
  auto good1 = awaiting_reconcile();
  auto bad = awaiting_reconcile();
  auto good2 = awaiting_reconcile();
  exec("CREATE FUNCTION refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$"
       " BEGIN RAISE EXCEPTION 'refused by the test'; END $$");
  exec("CREATE TRIGGER refuse BEFORE UPDATE ON movement_requests FOR EACH ROW"
       " WHEN (OLD.id = '" +
       bad + "') EXECUTE FUNCTION refuse_update()");
  // Gather the three into one flush behind a first one that waits.
  auto holder = hold_node_b(first);
  auto first_reply = ask(first);
  BOOST_REQUIRE(writer_waits_on_a_lock());
  auto good1_reply = ask(good1);
  auto bad_reply = ask(bad);
  auto good2_reply = ask(good2);
  holder->abort();
  BOOST_TEST(answer_of(first_reply) == "changed");
  BOOST_TEST(answer_of(good1_reply) == "changed");
  BOOST_TEST(answer_of(good2_reply) == "changed");
  auto bad_answer = answer_of(bad_reply);
  BOOST_TEST(bad_answer.find("refused by the test") != std::string::npos, bad_answer);
  BOOST_TEST(reconciled(good1));
  BOOST_TEST(reconciled(good2));
  // Left flagged for the sweep, nothing of it written.
  BOOST_TEST(snapshot(bad).needs_reconcile);
  BOOST_TEST(node_state(bad, "b") == "BLOCKED");
}

BOOST_FIXTURE_TEST_CASE(a_stopping_writer_writes_what_it_was_handed, writer_fixture) {
  auto first = awaiting_reconcile();
  auto second = awaiting_reconcile();
  auto holder = hold_node_b(first);
  auto first_reply = ask(first);
  BOOST_REQUIRE(writer_waits_on_a_lock());
  auto second_reply = ask(second);
  (*self)->send_exit(writer, caf::exit_reason::user_shutdown);
  holder->abort();
  BOOST_TEST(answer_of(first_reply) == "changed");
  BOOST_TEST(answer_of(second_reply) == "changed");
  BOOST_TEST(reconciled(second));
}

BOOST_AUTO_TEST_SUITE_END()
