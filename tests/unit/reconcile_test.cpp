// reconcile(plan, nodes) → actions (SPEC §1 "Reconcile — one pure function").
#include "domain/reconcile.hpp"

#include "domain/plan.hpp"
#include "domain/states.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

using namespace mg::domain;

namespace {

using keys = std::vector<std::string>;
using R = request_state;
using N = node_state;

struct spec_node {
  std::string key;
  std::string action_type = "noop";
  bool side_effect = false;
};

plan make_plan(const std::vector<spec_node>& nodes,
               const std::vector<std::pair<std::string, std::string>>& edges) {
  std::string js = R"({"template_key": "t", "version": 1, "nodes": [)";
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i)
      js += ",";
    js += R"({"node_key": ")" + nodes[i].key + R"(", "action_type": ")" + nodes[i].action_type +
          R"(", "side_effect": )" + (nodes[i].side_effect ? "true" : "false") +
          R"(, "config": {}})";
  }
  js += R"(], "edges": [)";
  for (size_t i = 0; i < edges.size(); ++i) {
    if (i)
      js += ",";
    js += R"([")" + edges[i].first + R"(", ")" + edges[i].second + R"("])";
  }
  js += "]}";
  auto r = compile_plan(js);
  std::string errors;
  for (auto& e : r.errors)
    errors += e.field + ": " + e.message + "\n";
  BOOST_TEST_INFO(errors);
  BOOST_REQUIRE(r.compiled.has_value());
  return *r.compiled;
}

/// Nodes in plan order; every node not named in `states` is BLOCKED.
reconcile_input make_input(const plan& p, request_state s, const std::map<std::string, N>& states,
                           bool dispatch_paused = false, bool attention_raised = false) {
  reconcile_input in;
  in.state = s;
  in.dispatch_paused = dispatch_paused;
  in.attention_raised = attention_raised;
  for (auto& pn : p.nodes) {
    node_view v;
    v.node_key = pn.node_key;
    auto it = states.find(pn.node_key);
    v.state = it == states.end() ? N::blocked : it->second;
    in.nodes.push_back(v);
  }
  return in;
}

node_view& node_of(reconcile_input& in, const std::string& key) {
  for (auto& n : in.nodes)
    if (n.node_key == key)
      return n;
  BOOST_FAIL("no node " + key);
  throw; // unreachable
}

void set_state(reconcile_input& in, const std::string& key, N s) {
  node_of(in, key).state = s;
}

/// Applies the actions to the input as the movement actor would.
reconcile_input apply(const reconcile_input& in, const reconcile_actions& a) {
  auto out = in;
  for (auto& n : out.nodes)
    if (std::find(a.activate.begin(), a.activate.end(), n.node_key) != a.activate.end())
      n.state = N::ready;
  if (a.new_state)
    out.state = *a.new_state;
  out.dispatch_paused = a.dispatch_paused;
  out.attention_raised = a.attention_raised;
  out.frontier = a.frontier;
  return out;
}

std::string str(std::optional<request_state> s) {
  return s ? std::string(to_string(*s)) : std::string("(none)");
}

std::string str(attention_reason a) {
  switch (a) {
  case attention_reason::none:
    return "none";
  case attention_reason::side_effect_at_risk:
    return "side_effect_at_risk";
  case attention_reason::manual_intervention:
    return "manual_intervention";
  case attention_reason::waiting_manual_action:
    return "waiting_manual_action";
  }
  return "?";
}

std::string describe(const reconcile_input& in) {
  std::string s = std::string(to_string(in.state)) + " [";
  for (auto& n : in.nodes) {
    s += " " + n.node_key + "=" + std::string(to_string(n.state));
    if (!n.error_code.empty())
      s += "(" + n.error_code + ")";
    if (n.unknown_for_seconds > 0)
      s += "(" + std::to_string(n.unknown_for_seconds) + "s)";
  }
  s += " ] paused=" + std::to_string(in.dispatch_paused) +
       " attention=" + std::to_string(in.attention_raised);
  return s;
}

// Two roots joined: a → j, b → j.
plan join_plan() {
  return make_plan({{"a"}, {"b"}, {"j"}}, {{"a", "j"}, {"b", "j"}});
}

// Fan-out: root → left, root → right.
plan fan_out_plan(bool left_side_effect, bool right_side_effect) {
  return make_plan(
      {{"root"}, {"left", "noop", left_side_effect}, {"right", "noop", right_side_effect}},
      {{"root", "left"}, {"root", "right"}});
}

const std::vector<request_state> all_request_states = {
    R::pending_approval,
    R::approved,
    R::executing,
    R::waiting_manual_action,
    R::manual_intervention,
    R::completed,
    R::failed,
    R::rejected,
    R::expired,
    R::cancelled,
};

const std::vector<node_state> all_node_states = {
    N::blocked,    N::ready,     N::preparing, N::awaiting_signature,
    N::submitting, N::submitted, N::observing, N::completed,
    N::failed,     N::unknown,   N::skipped,   N::cancelled,
};

} // namespace

BOOST_AUTO_TEST_SUITE(reconcile)

BOOST_AUTO_TEST_CASE(fan_in_activates_join_only_when_every_predecessor_is_done) {
  auto p = join_plan();
  struct row {
    N a, b;
    bool activated;
  };
  const row rows[] = {
      {N::completed, N::submitted, false}, {N::submitted, N::completed, false},
      {N::completed, N::ready, false},     {N::observing, N::completed, false},
      {N::skipped, N::submitting, false},  {N::completed, N::completed, true},
      {N::completed, N::skipped, true},    {N::skipped, N::completed, true},
      {N::skipped, N::skipped, true},
  };
  for (auto& r : rows) {
    auto in = make_input(p, R::executing, {{"a", r.a}, {"b", r.b}});
    auto out = mg::domain::reconcile(p, in);
    BOOST_TEST_CONTEXT(describe(in)) {
      BOOST_TEST(out.activate == (r.activated ? keys{"j"} : keys{}));
      BOOST_TEST(!out.dispatch_paused);
      BOOST_TEST(!out.new_state.has_value());
    }
  }
}

BOOST_AUTO_TEST_CASE(fan_in_roots_activate_first_and_join_waits_for_them) {
  auto p = join_plan();
  auto in = make_input(p, R::approved, {});
  auto out = mg::domain::reconcile(p, in);
  BOOST_TEST(out.activate == (keys{"a", "b"}));
  BOOST_TEST(out.frontier == (keys{"a", "b"}));
  BOOST_TEST(out.frontier_changed);
  BOOST_TEST(str(out.new_state) == "(none)");

  // One predecessor completes: still blocked.
  in = apply(in, out);
  set_state(in, "a", N::completed);
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(out.activate.empty());
  BOOST_TEST(out.frontier == (keys{"b"}));

  // The other completes: the join is activated.
  in = apply(in, out);
  set_state(in, "b", N::completed);
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(out.activate == (keys{"j"}));
  BOOST_TEST(out.frontier == (keys{"j"}));
}

BOOST_AUTO_TEST_CASE(dispatch_gate_shuts_while_any_node_failed_or_unknown) {
  // a → b, and an independent root x whose state drives the gate.
  auto p = make_plan({{"a"}, {"b"}, {"x"}}, {{"a", "b"}});
  struct row {
    N x;
    std::string error_code;
    double unknown_for;
    bool paused_in;
    bool gate_shut;
  };
  const row rows[] = {
      {N::failed, "PROVIDER_REJECTED", 0, false, true},
      {N::failed, "", 0, true, true},
      {N::unknown, "RECOVERY_PENDING", 10, false, true},  // young UNKNOWN
      {N::unknown, "OBSERVATION_TIMEOUT", 0, true, true}, // settled UNKNOWN
      {N::unknown, "RECOVERY_PENDING", 5000, true, true}, // escalated UNKNOWN
      {N::submitted, "", 0, false, false},
      {N::observing, "", 0, true, false}, // stale flag: cleared
      {N::completed, "", 0, true, false}, // after a retry: cleared
      {N::ready, "", 0, true, false},
  };
  for (auto& r : rows) {
    auto in = make_input(p, R::executing, {{"a", N::completed}, {"x", r.x}}, r.paused_in);
    node_of(in, "x").error_code = r.error_code;
    node_of(in, "x").unknown_for_seconds = r.unknown_for;
    auto out = mg::domain::reconcile(p, in);
    BOOST_TEST_CONTEXT(describe(in)) {
      BOOST_TEST(out.dispatch_paused == r.gate_shut);
      BOOST_TEST(out.activate == (r.gate_shut ? keys{} : keys{"b"}));
    }
  }
}

BOOST_AUTO_TEST_CASE(dispatch_gate_reopens_after_retry) {
  auto p = make_plan({{"a"}, {"b"}, {"x"}}, {{"a", "b"}});
  // x FAILED while a is in flight: gate shut, no verdict yet.
  auto in = make_input(p, R::executing, {{"a", N::submitted}, {"x", N::failed}}, true);
  auto out = mg::domain::reconcile(p, in);
  BOOST_TEST(out.dispatch_paused);
  BOOST_TEST(out.activate.empty());
  BOOST_TEST(!out.new_state.has_value());

  // a completes while x is still FAILED: b stays BLOCKED, the request fails.
  in = apply(in, out);
  set_state(in, "a", N::completed);
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(out.dispatch_paused);
  BOOST_TEST(out.activate.empty());
  BOOST_TEST(str(out.new_state) == "FAILED");

  // Operator retry: request back to EXECUTING, x FAILED → READY. The gate
  // clears and b is activated.
  in = apply(in, out);
  in.state = R::executing;
  in.attention_raised = true; // an earlier episode's flag: cleared too
  set_state(in, "x", N::ready);
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(!out.dispatch_paused);
  BOOST_TEST(!out.attention_raised);
  BOOST_TEST(out.activate == (keys{"b"}));
  BOOST_TEST(out.frontier == (keys{"b", "x"}));
  BOOST_TEST(!out.new_state.has_value());
}

BOOST_AUTO_TEST_CASE(frontier_is_ready_and_in_flight_nodes_in_plan_order) {
  // Plan order deliberately not alphabetical; all roots.
  auto p = make_plan({{"z_done"},
                      {"y_observing"},
                      {"x_ready"},
                      {"w_failed"},
                      {"v_submitting"},
                      {"u_unknown_young"},
                      {"t_unknown_timeout"},
                      {"s_submitted"},
                      {"r_unknown_escalated"},
                      {"q_skipped"},
                      {"p_cancelled"}},
                     {});
  auto in = make_input(p, R::executing,
                       {{"z_done", N::completed},
                        {"y_observing", N::observing},
                        {"x_ready", N::ready},
                        {"w_failed", N::failed},
                        {"v_submitting", N::submitting},
                        {"u_unknown_young", N::unknown},
                        {"t_unknown_timeout", N::unknown},
                        {"s_submitted", N::submitted},
                        {"r_unknown_escalated", N::unknown},
                        {"q_skipped", N::skipped},
                        {"p_cancelled", N::cancelled}},
                       true);
  node_of(in, "u_unknown_young").unknown_for_seconds = 30;
  node_of(in, "t_unknown_timeout").error_code = "OBSERVATION_TIMEOUT";
  node_of(in, "r_unknown_escalated").unknown_for_seconds = 901;
  const keys expected = {"y_observing", "x_ready", "v_submitting", "u_unknown_young",
                         "s_submitted"};

  auto out = mg::domain::reconcile(p, in);
  BOOST_TEST(out.frontier == expected);
  BOOST_TEST(out.frontier_changed); // input frontier was empty

  in.frontier = expected;
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(out.frontier == expected);
  BOOST_TEST(!out.frontier_changed);

  // Same keys in another order differ from the plan-order frontier.
  in.frontier = {"x_ready", "y_observing", "v_submitting", "u_unknown_young", "s_submitted"};
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(out.frontier == expected);
  BOOST_TEST(out.frontier_changed);

  // A stale extra key.
  in.frontier = expected;
  in.frontier.push_back("z_done");
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(out.frontier == expected);
  BOOST_TEST(out.frontier_changed);
}

BOOST_AUTO_TEST_CASE(frontier_includes_nodes_activated_in_the_same_pass) {
  auto p = make_plan({{"a"}, {"b"}, {"c"}}, {{"a", "b"}, {"a", "c"}});
  auto in = make_input(p, R::executing, {{"a", N::completed}});
  in.frontier = {"a"};
  auto out = mg::domain::reconcile(p, in);
  BOOST_TEST(out.activate == (keys{"b", "c"}));
  BOOST_TEST(out.frontier == (keys{"b", "c"}));
  BOOST_TEST(out.frontier_changed);
}

BOOST_AUTO_TEST_CASE(verdict_rule1_all_completed_or_skipped_completes) {
  auto p = make_plan({{"a", "noop", true}, {"b"}, {"c"}}, {{"a", "b"}, {"a", "c"}});
  struct row {
    R state;
    N a, b, c;
    std::optional<R> expected;
  };
  const row rows[] = {
      {R::executing, N::completed, N::completed, N::completed, R::completed},
      {R::executing, N::completed, N::skipped, N::completed, R::completed},
      {R::executing, N::skipped, N::skipped, N::skipped, R::completed},
      {R::waiting_manual_action, N::completed, N::completed, N::skipped, R::completed},
      {R::approved, N::skipped, N::skipped, N::skipped, R::completed},
      {R::executing, N::completed, N::completed, N::observing, std::nullopt},
      {R::executing, N::completed, N::ready, N::completed, std::nullopt},
  };
  for (auto& r : rows) {
    auto in = make_input(p, r.state, {{"a", r.a}, {"b", r.b}, {"c", r.c}});
    in.frontier = {"b"};
    auto out = mg::domain::reconcile(p, in);
    BOOST_TEST_CONTEXT(describe(in)) {
      BOOST_TEST(str(out.new_state) == str(r.expected));
      BOOST_TEST(str(out.attention) == "none");
      if (r.expected) {
        BOOST_TEST(out.frontier.empty());
        BOOST_TEST(!out.dispatch_paused);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(
    fan_out_failure_with_side_effect_in_flight_warns_once_then_manual_intervention) {
  // left (no side effect) FAILED, right (side effect) SUBMITTED.
  auto p = fan_out_plan(false, true);
  auto in =
      make_input(p, R::executing,
                 {{"root", N::completed}, {"left", N::failed}, {"right", N::submitted}}, true);
  in.frontier = {"left", "right"};
  node_of(in, "left").error_code = "PROVIDER_REJECTED";

  auto out = mg::domain::reconcile(p, in);
  BOOST_TEST(!out.new_state.has_value()); // settle before verdict: stays EXECUTING
  BOOST_TEST(str(out.attention) == "side_effect_at_risk");
  BOOST_TEST(out.attention_raised);
  BOOST_TEST(out.dispatch_paused);
  BOOST_TEST(out.frontier == (keys{"right"}));

  // Reconciling again with the flag set emits nothing more.
  in = apply(in, out);
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(str(out.attention) == "none");
  BOOST_TEST(out.attention_raised);
  BOOST_TEST(!out.new_state.has_value());
  BOOST_TEST(!out.changes_anything(in));

  // Moves inside the in-flight set change nothing either.
  set_state(in, "right", N::observing);
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(!out.changes_anything(in));

  // The side-effect branch completes: money moved on one branch, the other failed.
  set_state(in, "right", N::completed);
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(str(out.new_state) == "MANUAL_INTERVENTION");
  BOOST_TEST(str(out.attention) == "manual_intervention");
  BOOST_TEST(out.attention_raised);
  BOOST_TEST(out.frontier.empty());
  BOOST_TEST(out.frontier_changed);
}

BOOST_AUTO_TEST_CASE(fan_out_failure_with_completed_side_effect_warns_while_sibling_in_flight) {
  // The side effect is the completed root; neither branch is a side effect.
  auto p = make_plan({{"root", "noop", true}, {"left"}, {"right"}},
                     {{"root", "left"}, {"root", "right"}});
  auto in =
      make_input(p, R::executing,
                 {{"root", N::completed}, {"left", N::failed}, {"right", N::submitting}}, true);
  auto out = mg::domain::reconcile(p, in);
  BOOST_TEST(!out.new_state.has_value());
  BOOST_TEST(str(out.attention) == "side_effect_at_risk");
  BOOST_TEST(out.attention_raised);

  in = apply(in, out);
  set_state(in, "right", N::completed);
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(str(out.new_state) == "MANUAL_INTERVENTION");
}

BOOST_AUTO_TEST_CASE(fan_out_failure_without_counting_side_effect_ends_failed) {
  // left (the only side-effect node) FAILED definitively; right (no side effect) in flight.
  auto p = fan_out_plan(true, false);
  auto in =
      make_input(p, R::executing,
                 {{"root", N::completed}, {"left", N::failed}, {"right", N::submitted}}, true);
  node_of(in, "left").error_code = "PROVIDER_REJECTED";

  auto out = mg::domain::reconcile(p, in);
  BOOST_TEST(!out.new_state.has_value()); // right still in flight
  BOOST_TEST(str(out.attention) == "none");
  BOOST_TEST(!out.attention_raised);
  BOOST_TEST(out.dispatch_paused);

  in = apply(in, out);
  BOOST_TEST(!mg::domain::reconcile(p, in).changes_anything(in));

  set_state(in, "right", N::completed);
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(str(out.new_state) == "FAILED");
  BOOST_TEST(str(out.attention) == "none");
}

BOOST_AUTO_TEST_CASE(failure_with_unknown_side_effect_node_is_manual_intervention) {
  // An UNKNOWN side-effect node counts (it may have moved money).
  auto p = fan_out_plan(true, false);
  auto in = make_input(p, R::executing,
                       {{"root", N::completed}, {"left", N::unknown}, {"right", N::failed}}, true);
  node_of(in, "left").unknown_for_seconds = 60; // young: still in flight
  auto out = mg::domain::reconcile(p, in);
  BOOST_TEST(!out.new_state.has_value());
  BOOST_TEST(str(out.attention) == "side_effect_at_risk");

  in = apply(in, out);
  node_of(in, "left").unknown_for_seconds = 900; // escalated
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(str(out.new_state) == "MANUAL_INTERVENTION");
  BOOST_TEST(str(out.attention) == "manual_intervention");
}

BOOST_AUTO_TEST_CASE(settled_unknown_gives_manual_intervention_without_side_effect) {
  // Nothing is a side effect: only the settled UNKNOWN can force MANUAL_INTERVENTION.
  auto p = make_plan({{"a"}, {"b"}}, {{"a", "b"}});
  struct row {
    std::string error_code;
    double unknown_for;
    double escalate;
    bool settled;
  };
  const row rows[] = {
      {"OBSERVATION_TIMEOUT", 0, 900, true},
      {"OBSERVATION_TIMEOUT", 1, 900, true},
      {"RECOVERY_PENDING", 900, 900, true},
      {"", 1000, 900, true},
      {"RECOVERY_PENDING", 61, 60, true},
      {"RECOVERY_PENDING", 899, 900, false},
      {"", 0, 900, false},
      {"SUBMIT_TIMEOUT", 59.5, 60, false},
  };
  for (auto& r : rows) {
    auto in = make_input(p, R::executing, {{"a", N::completed}, {"b", N::unknown}}, true);
    in.unknown_escalate_seconds = r.escalate;
    node_of(in, "b").error_code = r.error_code;
    node_of(in, "b").unknown_for_seconds = r.unknown_for;
    auto out = mg::domain::reconcile(p, in);
    BOOST_TEST_CONTEXT(describe(in) << " escalate=" << r.escalate) {
      BOOST_TEST(is_settled_unknown(in.nodes[1], r.escalate) == r.settled);
      BOOST_TEST(is_in_flight(in.nodes[1], r.escalate) == !r.settled);
      BOOST_TEST(out.dispatch_paused);
      if (r.settled) {
        BOOST_TEST(str(out.new_state) == "MANUAL_INTERVENTION");
        BOOST_TEST(str(out.attention) == "manual_intervention");
        BOOST_TEST(out.frontier.empty());
      } else {
        BOOST_TEST(str(out.new_state) == "(none)");
        BOOST_TEST(str(out.attention) == "none"); // no side effect at risk
        BOOST_TEST(out.frontier == (keys{"b"}));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(settled_unknown_waits_for_other_nodes_in_flight) {
  auto p = fan_out_plan(false, false);
  auto in =
      make_input(p, R::executing,
                 {{"root", N::completed}, {"left", N::unknown}, {"right", N::observing}}, true);
  node_of(in, "left").error_code = "OBSERVATION_TIMEOUT";
  auto out = mg::domain::reconcile(p, in);
  BOOST_TEST(!out.new_state.has_value());
  BOOST_TEST(out.frontier == (keys{"right"}));

  set_state(in, "right", N::completed);
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(str(out.new_state) == "MANUAL_INTERVENTION");
}

BOOST_AUTO_TEST_CASE(in_flight_classification) {
  const double esc = 900;
  for (auto s : all_node_states) {
    node_view n{"n", s, "", 0};
    bool expected = s == N::submitting || s == N::submitted || s == N::observing || s == N::unknown;
    BOOST_TEST_CONTEXT(to_string(s)) {
      BOOST_TEST(is_in_flight(n, esc) == expected);
      BOOST_TEST(is_settled_unknown(n, esc) == false);
    }
  }
  BOOST_TEST(!is_in_flight(node_view{"n", N::unknown, "OBSERVATION_TIMEOUT", 0}, esc));
  BOOST_TEST(!is_in_flight(node_view{"n", N::unknown, "", 900}, esc));
  BOOST_TEST(is_in_flight(node_view{"n", N::unknown, "", 899.99}, esc));
  // The timeout code on a node that is not UNKNOWN settles nothing.
  BOOST_TEST(!is_settled_unknown(node_view{"n", N::failed, "OBSERVATION_TIMEOUT", 0}, esc));
}

BOOST_AUTO_TEST_CASE(rule4_manual_node_mid_dag_parks_and_resumes) {
  // a → m (manual) → b, and a → c in parallel.
  auto p = make_plan({{"a"}, {"m", "manual_confirm"}, {"b"}, {"c"}},
                     {{"a", "m"}, {"m", "b"}, {"a", "c"}});
  auto in = make_input(p, R::executing, {{"a", N::completed}});
  auto out = mg::domain::reconcile(p, in);
  BOOST_TEST(out.activate == (keys{"m", "c"}));
  // c is READY and automatic: not parked.
  BOOST_TEST(!out.new_state.has_value());

  // c in flight: not parked either.
  in = apply(in, out);
  set_state(in, "c", N::submitted);
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(!out.new_state.has_value());
  BOOST_TEST(str(out.attention) == "none");

  // c completes: only the manual node is left READY → parked.
  in = apply(in, out);
  set_state(in, "c", N::completed);
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(str(out.new_state) == "WAITING_MANUAL_ACTION");
  BOOST_TEST(str(out.attention) == "waiting_manual_action");
  BOOST_TEST(out.frontier == (keys{"m"}));
  BOOST_TEST(!out.dispatch_paused);

  // Parked and unchanged: nothing more.
  in = apply(in, out);
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(!out.changes_anything(in));
  BOOST_TEST(str(out.attention) == "none");

  // The operator completes m: b is activated and the request goes back to EXECUTING.
  set_state(in, "m", N::completed);
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(out.activate == (keys{"b"}));
  BOOST_TEST(str(out.new_state) == "EXECUTING");
  BOOST_TEST(out.frontier == (keys{"b"}));

  in = apply(in, out);
  set_state(in, "b", N::observing);
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(!out.new_state.has_value());

  in = apply(in, out);
  set_state(in, "b", N::completed);
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(str(out.new_state) == "COMPLETED");
}

BOOST_AUTO_TEST_CASE(rule4_manual_node_completed_last_completes_request) {
  auto p = make_plan({{"a"}, {"m", "manual_release"}}, {{"a", "m"}});
  auto in = make_input(p, R::executing, {{"a", N::completed}, {"m", N::ready}});
  auto out = mg::domain::reconcile(p, in);
  BOOST_TEST(str(out.new_state) == "WAITING_MANUAL_ACTION");
  in = apply(in, out);
  set_state(in, "m", N::completed);
  out = mg::domain::reconcile(p, in);
  BOOST_TEST(str(out.new_state) == "COMPLETED");
}

BOOST_AUTO_TEST_CASE(rule4_manual_first_node_parks_approved_request) {
  auto p = make_plan({{"m", "manual_fund"}, {"b"}}, {{"m", "b"}});
  auto in = make_input(p, R::approved, {});
  auto out = mg::domain::reconcile(p, in);
  BOOST_TEST(out.activate == (keys{"m"}));
  BOOST_TEST(str(out.new_state) == "WAITING_MANUAL_ACTION");
  BOOST_TEST(transition_allowed(R::approved, R::waiting_manual_action));
}

BOOST_AUTO_TEST_CASE(reconcile_is_idempotent) {
  auto join = join_plan();
  auto fan_se_right = fan_out_plan(false, true);
  auto fan_se_left = fan_out_plan(true, false);
  auto manual = make_plan({{"a"}, {"m", "manual_confirm"}, {"b"}, {"c"}},
                          {{"a", "m"}, {"m", "b"}, {"a", "c"}});

  struct scenario {
    const plan* p;
    reconcile_input in;
  };
  std::vector<scenario> cases;
  cases.push_back({&join, make_input(join, R::approved, {})});
  cases.push_back({&join, make_input(join, R::executing, {{"a", N::completed}, {"b", N::ready}})});
  cases.push_back({&join, make_input(join, R::executing, {{"a", N::completed}, {"b", N::skipped}},
                                     true, true)});
  cases.push_back(
      {&join, make_input(join, R::executing,
                         {{"a", N::completed}, {"b", N::completed}, {"j", N::completed}})});
  cases.push_back({&join, make_input(join, R::executing, {{"a", N::failed}, {"b", N::completed}})});
  cases.push_back(
      {&fan_se_right,
       make_input(fan_se_right, R::executing,
                  {{"root", N::completed}, {"left", N::failed}, {"right", N::submitted}})});
  cases.push_back(
      {&fan_se_right,
       make_input(fan_se_right, R::executing,
                  {{"root", N::completed}, {"left", N::failed}, {"right", N::completed}}, true,
                  true)});
  cases.push_back(
      {&fan_se_left,
       make_input(fan_se_left, R::executing,
                  {{"root", N::completed}, {"left", N::failed}, {"right", N::observing}})});
  {
    auto in = make_input(fan_se_left, R::executing,
                         {{"root", N::completed}, {"left", N::unknown}, {"right", N::completed}});
    node_of(in, "left").error_code = "OBSERVATION_TIMEOUT";
    cases.push_back({&fan_se_left, in});
  }
  {
    auto in = make_input(fan_se_left, R::executing,
                         {{"root", N::completed}, {"left", N::unknown}, {"right", N::submitting}});
    node_of(in, "left").unknown_for_seconds = 12;
    cases.push_back({&fan_se_left, in});
  }
  cases.push_back({&manual, make_input(manual, R::executing, {{"a", N::completed}})});
  cases.push_back(
      {&manual, make_input(manual, R::executing,
                           {{"a", N::completed}, {"m", N::ready}, {"c", N::completed}})});
  cases.push_back(
      {&manual, make_input(manual, R::waiting_manual_action,
                           {{"a", N::completed}, {"m", N::completed}, {"c", N::completed}})});
  {
    // Stale flags and frontier with nothing broken.
    auto in =
        make_input(manual, R::executing,
                   {{"a", N::completed}, {"m", N::completed}, {"c", N::observing}}, true, true);
    in.frontier = {"zzz", "a"};
    cases.push_back({&manual, in});
  }

  for (auto& c : cases) {
    auto first = mg::domain::reconcile(*c.p, c.in);
    auto next = apply(c.in, first);
    auto second = mg::domain::reconcile(*c.p, next);
    BOOST_TEST_CONTEXT(describe(c.in) << " -> " << describe(next)) {
      BOOST_TEST(!second.changes_anything(next));
      BOOST_TEST(second.activate.empty());
      BOOST_TEST(!second.new_state.has_value());
      BOOST_TEST(str(second.attention) == "none");
      if (first.new_state)
        BOOST_TEST(transition_allowed(c.in.state, *first.new_state));
    }
  }
}

BOOST_AUTO_TEST_CASE(inactive_request_states_get_no_actions) {
  auto p = fan_out_plan(false, true);
  // Inputs that would produce actions on an active request.
  std::vector<reconcile_input> inputs = {
      make_input(p, R::executing, {}),
      make_input(p, R::executing, {{"root", N::completed}}),
      make_input(p, R::executing,
                 {{"root", N::completed}, {"left", N::failed}, {"right", N::submitted}}),
      make_input(p, R::executing,
                 {{"root", N::completed}, {"left", N::completed}, {"right", N::completed}}, true,
                 true),
  };
  inputs[3].frontier = {"stale"};
  for (auto s : all_request_states) {
    if (s == R::approved || s == R::executing || s == R::waiting_manual_action)
      continue;
    for (auto in : inputs) {
      in.state = s;
      auto out = mg::domain::reconcile(p, in);
      BOOST_TEST_CONTEXT(describe(in)) {
        BOOST_TEST(!out.changes_anything(in));
        BOOST_TEST(out.activate.empty());
        BOOST_TEST(!out.new_state.has_value());
        BOOST_TEST(str(out.attention) == "none");
        BOOST_TEST(!out.frontier_changed);
        BOOST_TEST(out.frontier == in.frontier);
        BOOST_TEST(out.dispatch_paused == in.dispatch_paused);
        BOOST_TEST(out.attention_raised == in.attention_raised);
      }
    }
  }
  // And the three active ones do act on the first input.
  for (auto s : {R::approved, R::executing, R::waiting_manual_action}) {
    auto in = inputs[0];
    in.state = s;
    BOOST_TEST_CONTEXT(to_string(s)) {
      BOOST_TEST(mg::domain::reconcile(p, in).changes_anything(in));
    }
  }
}

BOOST_AUTO_TEST_CASE(affects_reconcile_except_starting_or_staying_in_flight) {
  for (auto from : all_node_states)
    for (auto to : all_node_states) {
      if (from == to)
        continue;
      BOOST_TEST_CONTEXT(to_string(from) << " -> " << to_string(to)) {
        bool starts_or_stays_in_flight =
            is_submitted_in_flight(to) && (from == N::ready || is_submitted_in_flight(from));
        BOOST_TEST(affects_reconcile(from, to) == !starts_or_stays_in_flight);
      }
    }
  BOOST_TEST(!affects_reconcile(N::ready, N::submitting));
  BOOST_TEST(affects_reconcile(N::submitting, N::ready)); // fencing
  BOOST_TEST(!affects_reconcile(N::submitting, N::submitted));
  BOOST_TEST(!affects_reconcile(N::submitted, N::observing));
  BOOST_TEST(!affects_reconcile(N::observing, N::submitted));
  BOOST_TEST(affects_reconcile(N::blocked, N::ready));
  BOOST_TEST(affects_reconcile(N::observing, N::completed));
  BOOST_TEST(affects_reconcile(N::submitted, N::failed));
  BOOST_TEST(affects_reconcile(N::submitting, N::unknown));
  BOOST_TEST(affects_reconcile(N::unknown, N::ready));
  BOOST_TEST(affects_reconcile(N::failed, N::ready));
  BOOST_TEST(affects_reconcile(N::ready, N::completed)); // manual completion
  BOOST_TEST(affects_reconcile(N::ready, N::failed));    // max attempts
}

// Fencing moves a node SUBMITTING → READY; with a sibling FAILED that leaves
// nothing in flight and releases the held verdict, so it must flag the
// request. This case checks that, for every allowed move that
// affects_reconcile() calls quiet, reconcile's output is indeed unchanged.
BOOST_AUTO_TEST_CASE(affects_reconcile_false_only_when_reconcile_output_is_unchanged) {
  auto p = fan_out_plan(false, true);
  // Contexts for `right`, the node that moves.
  struct context {
    std::string name;
    N left;
    bool paused;
    bool attention_raised;
  };
  const context contexts[] = {
      {"sibling in flight", N::observing, false, false},
      {"sibling completed", N::completed, false, false},
      {"sibling failed", N::failed, true, true},
  };
  for (auto& ctx : contexts)
    for (auto from : all_node_states)
      for (auto to : all_node_states) {
        if (from == to || affects_reconcile(from, to) || !transition_allowed(from, to))
          continue;
        auto before = make_input(p, R::executing, {{"root", N::completed}, {"left", ctx.left}},
                                 ctx.paused, ctx.attention_raised);
        set_state(before, "right", from);
        // The state reconcile left behind before the move.
        before = apply(before, mg::domain::reconcile(p, before));
        auto after = before;
        set_state(after, "right", to);
        auto a = mg::domain::reconcile(p, before);
        auto b = mg::domain::reconcile(p, after);
        BOOST_TEST_CONTEXT(ctx.name << ": right " << to_string(from) << " -> " << to_string(to)) {
          BOOST_TEST(!b.changes_anything(after));
          BOOST_TEST(str(a.new_state) == str(b.new_state));
          BOOST_TEST(a.activate == b.activate);
          BOOST_TEST(a.frontier == b.frontier);
          BOOST_TEST(a.dispatch_paused == b.dispatch_paused);
        }
      }
}

BOOST_AUTO_TEST_SUITE_END()
