// compile_plan, graph_hash and plan lookups (SPEC §3).
#include "domain/plan.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>

using namespace mg::domain;

namespace {

// The example from SPEC §3.
const std::string spec_example = R"({"template_key": "cex_to_chain_usdc", "version": 1,
 "risk_controls": {"max_amount": "250000"},
 "nodes": [
   {"node_key": "withdraw", "node_kind": "action",
    "action_type": "cex_withdrawal", "executor_key": "sim",
    "side_effect": true, "signing_required": false,
    "config": {"venue": "$ref:input.venue"},
    "timeout_policy": {"observe_seconds": 1800}},
   {"node_key": "withdraw_status", "action_type": "cex_withdrawal_status",
    "executor_key": "sim", "config": {"withdrawal_id": "$ref:withdraw.withdrawal_id"}}
 ],
 "edges": [["withdraw", "withdraw_status"]]})";

// Wraps node objects and edges into a minimal valid template.
std::string plan_json(const std::string& nodes, const std::string& edges = "[]") {
  return R"({"template_key": "t", "version": 1, "nodes": [)" + nodes + R"(], "edges": )" + edges +
         "}";
}

std::string node(const std::string& key, const std::string& config = "{}") {
  return R"({"node_key": ")" + key + R"(", "action_type": "noop", "config": )" + config + "}";
}

// a -> b -> c, plus d with no edges.
std::string chain_nodes(const std::string& c_config) {
  return node("a") + "," + node("b") + "," + node("c", c_config) + "," + node("d");
}
const std::string chain_edges = R"([["a","b"],["b","c"]])";

bool has_error(const compile_result& r, const std::string& field, const std::string& fragment) {
  return std::any_of(r.errors.begin(), r.errors.end(), [&](const compile_error& e) {
    return e.field == field && e.message.find(fragment) != std::string::npos;
  });
}

std::string describe(const compile_result& r) {
  std::string s;
  for (auto& e : r.errors)
    s += e.field + ": " + e.message + "\n";
  return s;
}

void require_single_error(const compile_result& r, const std::string& field,
                          const std::string& fragment) {
  BOOST_TEST_INFO(describe(r));
  BOOST_TEST(!r.compiled.has_value());
  BOOST_TEST(r.errors.size() == 1u);
  BOOST_TEST(has_error(r, field, fragment));
}

std::string hash_of(const std::string& json) {
  auto r = compile_plan(json);
  BOOST_TEST_INFO(describe(r));
  BOOST_REQUIRE(r.compiled.has_value());
  return r.graph_hash;
}

} // namespace

BOOST_AUTO_TEST_SUITE(plan)

BOOST_AUTO_TEST_CASE(spec_example_compiles) {
  auto r = compile_plan(spec_example);
  BOOST_TEST_INFO(describe(r));
  BOOST_REQUIRE(r.compiled.has_value());
  BOOST_TEST(r.errors.empty());
  const auto& p = *r.compiled;
  BOOST_TEST(p.template_key == "cex_to_chain_usdc");
  BOOST_TEST(p.version == 1);
  BOOST_TEST(p.risk_controls_json == R"({"max_amount":"250000"})");
  BOOST_REQUIRE(p.nodes.size() == 2u);
  const auto& w = p.nodes[0];
  BOOST_TEST(w.node_key == "withdraw");
  BOOST_TEST(w.action_type == "cex_withdrawal");
  BOOST_TEST(w.side_effect);
  BOOST_TEST(!w.signing_required);
  BOOST_TEST(w.config_json == R"({"venue":"$ref:input.venue"})");
  BOOST_TEST(w.timeout_policy_json == R"({"observe_seconds":1800})");
  BOOST_REQUIRE(p.edges.size() == 1u);
  BOOST_TEST(p.edges[0].first == "withdraw");
  BOOST_TEST(p.edges[0].second == "withdraw_status");
  BOOST_TEST(p.predecessors[1] == std::vector<int>{0});
  BOOST_TEST(p.successors[0] == std::vector<int>{1});
  BOOST_TEST(p.predecessors[0].empty());
  BOOST_TEST(r.graph_hash.size() == 64u);
  BOOST_TEST(r.graph_hash.find_first_not_of("0123456789abcdef") == std::string::npos);
  BOOST_TEST(r.graph_hash == graph_hash(p));
}

BOOST_AUTO_TEST_CASE(defaults_apply_to_omitted_fields) {
  auto r = compile_plan(R"({"template_key": "t", "version": 3,
    "nodes": [{"node_key": "only", "action_type": "manual_review", "signer_key": null}]})");
  BOOST_TEST_INFO(describe(r));
  BOOST_REQUIRE(r.compiled.has_value());
  const auto& n = r.compiled->nodes[0];
  BOOST_TEST(r.compiled->version == 3);
  BOOST_TEST(r.compiled->risk_controls_json == "{}");
  BOOST_TEST(r.compiled->edges.empty());
  BOOST_TEST(n.node_kind == "action");
  BOOST_TEST(n.executor_key == "sim");
  BOOST_TEST(n.signer_key.empty());
  BOOST_TEST(!n.side_effect);
  BOOST_TEST(!n.signing_required);
  BOOST_TEST(n.config_json == "{}");
  BOOST_TEST(n.timeout_policy_json == "{}");
  BOOST_TEST(n.is_manual());
}

BOOST_AUTO_TEST_CASE(find_and_successor_keys) {
  auto r = compile_plan(plan_json(chain_nodes("{}"), R"([["a","b"],["a","c"],["b","c"]])"));
  BOOST_REQUIRE(r.compiled.has_value());
  const auto& p = *r.compiled;
  BOOST_TEST(p.find("c").value() == 2);
  BOOST_TEST(!p.find("zz").has_value());
  BOOST_TEST(p.successor_keys("a") == (std::vector<std::string>{"b", "c"}));
  BOOST_TEST(p.successor_keys("c").empty());
  BOOST_TEST(p.predecessors[2] == (std::vector<int>{0, 1}));
  BOOST_TEST(p.index_of.at("d") == 3);
}

BOOST_AUTO_TEST_CASE(find_works_on_hand_built_plan) {
  mg::domain::plan p;
  p.nodes.resize(2);
  p.nodes[0].node_key = "x";
  p.nodes[1].node_key = "y";
  p.edges = {{"x", "y"}};
  BOOST_TEST(p.find("y").value() == 1);
  BOOST_TEST(p.successor_keys("x") == std::vector<std::string>{"y"});
}

BOOST_AUTO_TEST_CASE(invalid_json_refused) {
  require_single_error(compile_plan("{not json"), "$", "invalid JSON");
  require_single_error(compile_plan("[1]"), "$", "object");
}

BOOST_AUTO_TEST_CASE(header_type_errors) {
  auto r = compile_plan(R"({"template_key": 7, "version": 0, "risk_controls": [],
    "nodes": [{"node_key": "a", "action_type": "x"}]})");
  BOOST_TEST_INFO(describe(r));
  BOOST_TEST(r.errors.size() == 3u);
  BOOST_TEST(has_error(r, "template_key", "string"));
  BOOST_TEST(has_error(r, "version", ">= 1"));
  BOOST_TEST(has_error(r, "risk_controls", "object"));
  require_single_error(
      compile_plan(R"({"template_key": "t", "version": 1.5, "nodes": [)" + node("a") + "]}"),
      "version", "integer");
  require_single_error(compile_plan(R"({"version": 1, "nodes": [)" + node("a") + "]}"),
                       "template_key", "required");
}

BOOST_AUTO_TEST_CASE(at_least_one_node_required) {
  require_single_error(compile_plan(plan_json("")), "nodes", "at least one node");
  require_single_error(compile_plan(R"({"template_key": "t", "version": 1})"), "nodes", "required");
  require_single_error(compile_plan(R"({"template_key": "t", "version": 1, "nodes": {}})"), "nodes",
                       "array");
}

BOOST_AUTO_TEST_CASE(node_type_errors_name_the_field) {
  auto r = compile_plan(plan_json(node("a") + R"(,
    {"node_key": "b", "action_type": 5, "node_kind": false, "executor_key": [],
     "signer_key": 1, "side_effect": "yes", "signing_required": 1,
     "config": "x", "timeout_policy": 3}, 17)"));
  BOOST_TEST_INFO(describe(r));
  BOOST_TEST(!r.compiled.has_value());
  BOOST_TEST(r.errors.size() == 9u);
  BOOST_TEST(has_error(r, "nodes[1].action_type", "string"));
  BOOST_TEST(has_error(r, "nodes[1].node_kind", "string"));
  BOOST_TEST(has_error(r, "nodes[1].executor_key", "string"));
  BOOST_TEST(has_error(r, "nodes[1].signer_key", "string"));
  BOOST_TEST(has_error(r, "nodes[1].side_effect", "boolean"));
  BOOST_TEST(has_error(r, "nodes[1].signing_required", "boolean"));
  BOOST_TEST(has_error(r, "nodes[1].config", "object"));
  BOOST_TEST(has_error(r, "nodes[1].timeout_policy", "object"));
  BOOST_TEST(has_error(r, "nodes[2]", "object"));
}

BOOST_AUTO_TEST_CASE(node_key_required_and_well_formed) {
  require_single_error(compile_plan(plan_json(R"({"action_type": "x"})")), "nodes[0].node_key",
                       "required");
  require_single_error(compile_plan(plan_json(node(""))), "nodes[0].node_key", "empty");
  require_single_error(compile_plan(plan_json(node("has space"))), "nodes[0].node_key", "letters");
  require_single_error(compile_plan(plan_json(node("a.b"))), "nodes[0].node_key", "letters");
  require_single_error(compile_plan(plan_json(node("input"))), "nodes[0].node_key", "reserved");
  BOOST_TEST(compile_plan(plan_json(node("Ok_key-9"))).compiled.has_value());
}

BOOST_AUTO_TEST_CASE(action_type_required) {
  require_single_error(compile_plan(plan_json(R"({"node_key": "a"})")), "nodes[0].action_type",
                       "required");
}

BOOST_AUTO_TEST_CASE(duplicate_node_keys_refused) {
  require_single_error(compile_plan(plan_json(node("a") + "," + node("b") + "," + node("a"))),
                       "nodes[2].node_key", "duplicate node key 'a'");
}

BOOST_AUTO_TEST_CASE(edge_to_unknown_node_refused) {
  auto r = compile_plan(plan_json(node("a"), R"([["a","ghost"],["phantom","a"]])"));
  BOOST_TEST_INFO(describe(r));
  BOOST_TEST(r.errors.size() == 2u);
  BOOST_TEST(has_error(r, "edges[0][1]", "unknown node 'ghost'"));
  BOOST_TEST(has_error(r, "edges[1][0]", "unknown node 'phantom'"));
}

BOOST_AUTO_TEST_CASE(malformed_edges_refused) {
  auto r = compile_plan(plan_json(node("a") + "," + node("b"), R"([["a"],["a",2],"a-b"])"));
  BOOST_TEST_INFO(describe(r));
  BOOST_TEST(r.errors.size() == 3u);
  BOOST_TEST(has_error(r, "edges[0]", "pair"));
  BOOST_TEST(has_error(r, "edges[1]", "pair"));
  BOOST_TEST(has_error(r, "edges[2]", "pair"));
  require_single_error(compile_plan(plan_json(node("a"), "{}")), "edges", "array");
}

BOOST_AUTO_TEST_CASE(self_edge_refused) {
  require_single_error(compile_plan(plan_json(node("a"), R"([["a","a"]])")), "edges[0]",
                       "self edge");
}

BOOST_AUTO_TEST_CASE(duplicate_edge_refused) {
  require_single_error(
      compile_plan(plan_json(node("a") + "," + node("b"), R"([["a","b"],["a","b"]])")), "edges[1]",
      "duplicate edge a -> b");
}

BOOST_AUTO_TEST_CASE(cycle_detected_and_named) {
  // a -> b -> c -> a is a cycle; d hangs off it and is not part of it.
  auto r =
      compile_plan(plan_json(chain_nodes("{}"), R"([["a","b"],["b","c"],["c","a"],["c","d"]])"));
  require_single_error(r, "edges", "cycle among nodes: a, b, c");
}

BOOST_AUTO_TEST_CASE(two_cycles_reported_separately) {
  auto r =
      compile_plan(plan_json(chain_nodes("{}"), R"([["a","b"],["b","a"],["c","d"],["d","c"]])"));
  BOOST_TEST_INFO(describe(r));
  BOOST_TEST(r.errors.size() == 2u);
  BOOST_TEST(has_error(r, "edges", "cycle among nodes: a, b"));
  BOOST_TEST(has_error(r, "edges", "cycle among nodes: c, d"));
}

BOOST_AUTO_TEST_CASE(diamond_is_not_a_cycle) {
  auto r =
      compile_plan(plan_json(chain_nodes("{}"), R"([["a","b"],["a","c"],["b","d"],["c","d"]])"));
  BOOST_TEST_INFO(describe(r));
  BOOST_TEST(r.compiled.has_value());
}

BOOST_AUTO_TEST_CASE(ref_to_input_allowed) {
  auto r = compile_plan(plan_json(node("a", R"({"venue": "$ref:input.venue"})")));
  BOOST_TEST_INFO(describe(r));
  BOOST_TEST(r.compiled.has_value());
}

BOOST_AUTO_TEST_CASE(ref_to_direct_predecessor_allowed) {
  auto r = compile_plan(plan_json(chain_nodes(R"({"x": "$ref:b.tx_id"})"), chain_edges));
  BOOST_TEST_INFO(describe(r));
  BOOST_TEST(r.compiled.has_value());
}

BOOST_AUTO_TEST_CASE(ref_to_transitive_predecessor_allowed) {
  auto r = compile_plan(plan_json(chain_nodes(R"({"x": "$ref:a.tx_id"})"), chain_edges));
  BOOST_TEST_INFO(describe(r));
  BOOST_TEST(r.compiled.has_value());
}

BOOST_AUTO_TEST_CASE(ref_to_unrelated_node_refused) {
  require_single_error(
      compile_plan(plan_json(chain_nodes(R"({"x": "$ref:d.tx_id"})"), chain_edges)),
      "nodes[2].config.x", "not a predecessor of 'c'");
}

BOOST_AUTO_TEST_CASE(ref_to_sibling_refused) {
  // a -> b and a -> c: b and c are siblings.
  auto nodes = node("a") + "," + node("b", R"({"x": "$ref:c.id"})") + "," + node("c");
  require_single_error(compile_plan(plan_json(nodes, R"([["a","b"],["a","c"]])")),
                       "nodes[1].config.x", "not a predecessor of 'b'");
}

BOOST_AUTO_TEST_CASE(ref_to_successor_refused) {
  auto nodes = node("a", R"({"x": "$ref:b.id"})") + "," + node("b");
  require_single_error(compile_plan(plan_json(nodes, R"([["a","b"]])")), "nodes[0].config.x",
                       "not a predecessor of 'a'");
}

BOOST_AUTO_TEST_CASE(ref_to_self_refused) {
  require_single_error(compile_plan(plan_json(node("a", R"({"x": "$ref:a.id"})"))),
                       "nodes[0].config.x", "not a predecessor");
}

BOOST_AUTO_TEST_CASE(ref_to_unknown_node_refused) {
  require_single_error(compile_plan(plan_json(node("a", R"({"x": "$ref:ghost.id"})"))),
                       "nodes[0].config.x", "unknown node 'ghost'");
}

BOOST_AUTO_TEST_CASE(malformed_refs_refused) {
  auto r = compile_plan(plan_json(
      node("a", R"({"p": "$ref:input", "q": "$ref:input.", "r": "$ref:.x", "s": "$ref:"})")));
  BOOST_TEST_INFO(describe(r));
  BOOST_TEST(r.errors.size() == 4u);
  for (const char* f : {"p", "q", "r", "s"})
    BOOST_TEST(has_error(r, std::string("nodes[0].config.") + f, "malformed"));
}

BOOST_AUTO_TEST_CASE(only_top_level_string_refs_checked) {
  // resolve_refs replaces only top-level strings, so nested ones are data.
  auto r = compile_plan(
      plan_json(node("a", R"({"nested": {"x": "$ref:ghost.id"}, "list": ["$ref:ghost.id"],
                              "plain": "ref:ghost.id", "n": 5})")));
  BOOST_TEST_INFO(describe(r));
  BOOST_TEST(r.compiled.has_value());
}

BOOST_AUTO_TEST_CASE(all_errors_reported_together) {
  auto r = compile_plan(R"({"template_key": "t", "version": 0,
    "nodes": [
      {"node_key": "a", "action_type": "x", "config": {"v": "$ref:c.id"}},
      {"node_key": "b", "action_type": "x"},
      {"node_key": "a", "action_type": "x"},
      {"node_key": "c", "side_effect": "no"},
      {"node_key": "d", "action_type": "x"}
    ],
    "edges": [["a","b"],["b","a"],["a","nope"],["d","d"],["b","c"],["b","c"]]})");
  BOOST_TEST_INFO(describe(r));
  BOOST_TEST(!r.compiled.has_value());
  BOOST_TEST(r.graph_hash.empty());
  BOOST_TEST(has_error(r, "version", ">= 1"));
  BOOST_TEST(has_error(r, "nodes[2].node_key", "duplicate"));
  BOOST_TEST(has_error(r, "nodes[3].action_type", "required"));
  BOOST_TEST(has_error(r, "nodes[3].side_effect", "boolean"));
  BOOST_TEST(has_error(r, "edges[2][1]", "unknown node 'nope'"));
  BOOST_TEST(has_error(r, "edges[3]", "self edge"));
  BOOST_TEST(has_error(r, "edges[5]", "duplicate edge"));
  BOOST_TEST(has_error(r, "edges", "cycle among nodes: a, b"));
  BOOST_TEST(has_error(r, "nodes[0].config.v", "not a predecessor"));
  BOOST_TEST(r.errors.size() == 9u);
}

BOOST_AUTO_TEST_CASE(graph_hash_ignores_key_order_and_whitespace) {
  const std::string reordered = R"({"edges": [["withdraw", "withdraw_status"]],
   "nodes": [
     {"timeout_policy": {"observe_seconds": 1800}, "config": {"venue": "$ref:input.venue"},
      "signing_required": false, "side_effect": true, "executor_key": "sim",
      "action_type": "cex_withdrawal", "node_kind": "action", "node_key": "withdraw"},
     {"config": {"withdrawal_id": "$ref:withdraw.withdrawal_id"}, "executor_key": "sim",
      "action_type": "cex_withdrawal_status", "node_key": "withdraw_status"}],
   "risk_controls": {"max_amount": "250000"}, "version": 1, "template_key": "cex_to_chain_usdc"})";
  BOOST_TEST(hash_of(spec_example) == hash_of(reordered));
}

BOOST_AUTO_TEST_CASE(graph_hash_ignores_timeout_policy) {
  std::string changed = spec_example;
  changed.replace(changed.find("1800"), 4, "60");
  BOOST_TEST(hash_of(spec_example) == hash_of(changed));
  const std::string base = plan_json(node("a"));
  const std::string with_policy =
      plan_json(R"({"node_key": "a", "action_type": "noop", "timeout_policy": {"x": 1}})");
  BOOST_TEST(hash_of(base) == hash_of(with_policy));
}

BOOST_AUTO_TEST_CASE(graph_hash_ignores_template_metadata) {
  std::string changed = spec_example;
  changed.replace(changed.find("250000"), 6, "1");
  BOOST_TEST(hash_of(spec_example) == hash_of(changed));
}

BOOST_AUTO_TEST_CASE(graph_hash_changes_with_config) {
  std::string changed = spec_example;
  changed.replace(changed.find("$ref:input.venue"), 16, "$ref:input.place");
  BOOST_TEST(hash_of(spec_example) != hash_of(changed));
  // A nested key order change in config is not a change.
  BOOST_TEST(hash_of(plan_json(node("a", R"({"o": {"x": 1, "y": 2}})"))) ==
             hash_of(plan_json(node("a", R"({"o": {"y": 2, "x": 1}})"))));
}

BOOST_AUTO_TEST_CASE(graph_hash_changes_with_edges) {
  const std::string nodes = node("a") + "," + node("b") + "," + node("c");
  const auto h1 = hash_of(plan_json(nodes, R"([["a","b"]])"));
  const auto h2 = hash_of(plan_json(nodes, R"([["a","b"],["b","c"]])"));
  const auto h3 = hash_of(plan_json(nodes, R"([["a","c"]])"));
  const auto h0 = hash_of(plan_json(nodes));
  BOOST_TEST(h1 != h2);
  BOOST_TEST(h1 != h3);
  BOOST_TEST(h1 != h0);
}

BOOST_AUTO_TEST_CASE(graph_hash_changes_with_node_fields) {
  const auto base = hash_of(plan_json(node("a")));
  BOOST_TEST(base != hash_of(plan_json(node("b"))));
  BOOST_TEST(base != hash_of(plan_json(
                         R"({"node_key": "a", "action_type": "noop", "side_effect": true})")));
  BOOST_TEST(base !=
             hash_of(plan_json(R"({"node_key": "a", "action_type": "noop", "signer_key": "s1"})")));
  BOOST_TEST(base != hash_of(plan_json(
                         R"({"node_key": "a", "action_type": "noop", "executor_key": "http"})")));
  // Spelling out a default is not a change.
  BOOST_TEST(base == hash_of(plan_json(R"({"node_key": "a", "action_type": "noop",
    "node_kind": "action", "executor_key": "sim", "signer_key": "", "side_effect": false})")));
}

BOOST_AUTO_TEST_CASE(graph_hash_known_value) {
  // Pins the hashed shape documented in plan.cpp: sha256 of
  // {"edges":[],"nodes":[{"action_type":"noop","config":{},"executor_key":"sim",
  //  "node_key":"a","node_kind":"action","side_effect":false,"signing_required":false}]}
  mg::domain::plan p;
  p.nodes.resize(1);
  p.nodes[0].node_key = "a";
  p.nodes[0].action_type = "noop";
  BOOST_TEST(graph_hash(p) == hash_of(plan_json(node("a"))));
  BOOST_TEST(graph_hash(p) == "d58692e6302f4eda24a2ece2386649fb4999570ad8704d7d91ddd6d2fbfede5f");
}

BOOST_AUTO_TEST_SUITE_END()
