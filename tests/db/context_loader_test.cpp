// persistence/context_loader: the contexts of several nodes read together
// are, one by one, what reading each alone gives, whatever request, plan and
// attempt each node belongs to.
#include <boost/test/unit_test.hpp>

#include "actors/workers/node_dispatcher.hpp"
#include "actors/workers/node_observer.hpp"
#include "domain/json.hpp"
#include "persistence/context_loader.hpp"
#include "persistence/node_store.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;

namespace {

const char* chain_template = R"({"template_key": "ctx", "version": 1,
  "nodes": [{"node_key": "a", "action_type": "step",
             "config": {"sim": {"provider_refs": {"amount_out": 42, "only_a": "x"}}}},
            {"node_key": "b", "action_type": "step",
             "config": {"sim": {"provider_refs": {"only_b": "y"}}}},
            {"node_key": "c", "action_type": "step",
             "config": {"venue": "$ref:input.venue", "got": "$ref:a.amount_out"}}],
  "edges": [["a", "b"], ["b", "c"]]})";

const char* fan_in_template = R"({"template_key": "fan_in", "version": 1,
  "nodes": [{"node_key": "z_first", "action_type": "step",
             "config": {"sim": {"provider_refs": {"shared": "z_first", "only_z": 1}}}},
            {"node_key": "a_second", "action_type": "step",
             "config": {"sim": {"provider_refs": {"shared": "a_second", "only_a": 2}}}},
            {"node_key": "join", "action_type": "step"}],
  "edges": [["a_second", "join"], ["z_first", "join"]]})";

/// Runs the reference passes until `node_key` of `id` is READY.
void drive_until_ready(test::db_fixture& f, const std::string& id, const std::string& node_key) {
  for (int i = 0; i < 6 && f.node_state(id, node_key) != "READY"; ++i) {
    workers::dispatch_pass(f.conn, f.engine());
    workers::observe_pass(f.conn, f.engine());
    f.reconcile(id);
  }
  BOOST_TEST_REQUIRE(f.node_state(id, node_key) == "READY");
}

void check_same(const db::context_result& together, const db::context_result& alone) {
  BOOST_TEST(together.ok == alone.ok);
  BOOST_TEST(together.error_code == alone.error_code);
  BOOST_TEST(together.ctx.request_node_id == alone.ctx.request_node_id);
  BOOST_TEST(together.ctx.attempt_no == alone.ctx.attempt_no);
  BOOST_TEST(together.ctx.idempotency_key == alone.ctx.idempotency_key);
  BOOST_TEST(together.ctx.node_config == alone.ctx.node_config);
  BOOST_TEST(together.ctx.provider_context == alone.ctx.provider_context);
  BOOST_TEST(together.ctx.prior_artifacts == alone.ctx.prior_artifacts);
}

} // namespace

BOOST_AUTO_TEST_SUITE(context_loader)

BOOST_FIXTURE_TEST_CASE(contexts_read_together_are_those_read_one_by_one,
                        test::reference_db_fixture) {
  add_template(chain_template);
  add_template(fan_in_template);
  auto chain = create_and_approve("ctx", R"({"venue": "kraken"})");
  auto fan_in = create_and_approve("fan_in");
  auto fresh = create_and_approve("ctx", R"({"venue": "bitstamp"})");
  drive_until_ready(*this, chain, "c");
  drive_until_ready(*this, fan_in, "join");

  pqxx::work tx(conn.get());
  auto c = db::load_node(tx, test::node_id(*this, chain, "c"));
  auto join = db::load_node(tx, test::node_id(*this, fan_in, "join"));
  auto first = db::load_node(tx, test::node_id(*this, fresh, "a"));
  BOOST_TEST_REQUIRE((c && join && first));
  auto chain_plan = engine().plans.get(tx, "ctx", 1);
  auto fan_in_plan = engine().plans.get(tx, "fan_in", 1);
  const std::vector<db::context_request> wanted{{&*c, chain_plan.get(), 1},
                                                {&*join, fan_in_plan.get(), 1},
                                                {&*first, chain_plan.get(), 1},
                                                {&*c, chain_plan.get(), 2}};
  auto together = db::build_contexts(tx, wanted);
  BOOST_TEST_REQUIRE(together.size() == wanted.size());
  for (size_t i = 0; i < wanted.size(); ++i) {
    BOOST_TEST_CONTEXT("node " << i) {
      check_same(together[i],
                 db::build_context(tx, *wanted[i].node, *wanted[i].plan, wanted[i].attempt_no));
    }
  }
  // Each answer belongs to its own node: a mix-up shows here.
  auto c_ctx = json::parse_trusted(together[0].ctx.provider_context, "c");
  BOOST_TEST(c_ctx.HasMember("only_b"));
  auto c_config = json::parse_trusted(together[0].ctx.node_config, "c config");
  BOOST_TEST(c_config["got"].GetInt() == 42);
  auto join_ctx = json::parse_trusted(together[1].ctx.provider_context, "join");
  BOOST_TEST(std::string(join_ctx["shared"].GetString()) == "a_second");
  BOOST_TEST(together[2].ctx.provider_context == "{}");
  BOOST_TEST(together[2].ctx.prior_artifacts == "[]");
  BOOST_TEST(together[3].ctx.attempt_no == 2);
  BOOST_TEST(together[3].ctx.idempotency_key == c->id + ":2");
  BOOST_TEST(db::build_contexts(tx, {}).empty());
}

namespace {

/// The context built from what `claimed`'s claim read is the one read apart.
void check_read_with_claim(pqxx::transaction_base& tx, const db::claimed_node& claimed,
                           const db::stored_plan& plan) {
  BOOST_TEST_CONTEXT("node " << claimed.node_key) {
    BOOST_TEST(claimed.completed_for_context.has_value());
    auto read_apart = claimed;
    read_apart.completed_for_context.reset();
    check_same(db::build_context(tx, claimed, plan, 1), db::build_context(tx, read_apart, plan, 1));
  }
}

} // namespace

// A dispatch claim reads what its node's context needs with the node, so
// the context costs no statement of its own; it is the context read apart.
BOOST_FIXTURE_TEST_CASE(a_dispatch_claim_reads_its_context_with_the_node,
                        test::reference_db_fixture) {
  add_template(chain_template);
  add_template(fan_in_template);
  auto chain = create_and_approve("ctx", R"({"venue": "kraken"})");
  drive_until_ready(*this, chain, "c");
  {
    pqxx::work tx(conn.get());
    auto c = db::claim_for_dispatch(tx, test::node_id(*this, chain, "c"), "devnet");
    BOOST_TEST_REQUIRE(c.has_value());
    auto plan = engine().plans.get(tx, "ctx", 1);
    check_read_with_claim(tx, *c, *plan);
    auto built = db::build_context(tx, *c, *plan, 1).ctx;
    BOOST_TEST(json::parse_trusted(built.node_config, "c")["got"].GetInt() == 42);
    // Prior artifacts are the direct predecessor's only.
    auto prior = json::parse_trusted(built.prior_artifacts, "c prior");
    BOOST_TEST(prior.GetArray().Size() > 0u);
    for (auto& a : prior.GetArray())
      BOOST_TEST(std::string(a["node_key"].GetString()) == "b");
  }
  auto fan_in = create_and_approve("fan_in");
  drive_until_ready(*this, fan_in, "join");
  pqxx::work tx(conn.get());
  auto joined = db::claim_for_dispatch_batch(tx, {test::node_id(*this, fan_in, "join")}, "devnet");
  BOOST_TEST_REQUIRE(joined.size() == 1u);
  check_read_with_claim(tx, joined[0], *engine().plans.get(tx, "fan_in", 1));
}

BOOST_AUTO_TEST_SUITE_END()
