#include "domain/reconcile.hpp"

#include <algorithm>

namespace mg::domain {

bool is_settled_unknown(const node_view& n, double unknown_escalate_seconds) {
  return n.state == node_state::unknown &&
         (settles_at_once(n.error_code) || n.unknown_for_seconds >= unknown_escalate_seconds);
}

bool is_in_flight(const node_view& n, double unknown_escalate_seconds) {
  if (n.state == node_state::unknown)
    return !is_settled_unknown(n, unknown_escalate_seconds);
  return is_submitted_in_flight(n.state);
}

bool reconcile_actions::changes_anything(const reconcile_input& in) const {
  return !activate.empty() || dispatch_paused != in.dispatch_paused ||
         attention_raised != in.attention_raised || frontier_changed || new_state.has_value() ||
         attention != attention_reason::none;
}

bool affects_reconcile(node_state from, node_state to) {
  // Starting an attempt or moving between in-flight states changes neither
  // frontier, gate nor verdict. Anything else may — fencing (SUBMITTING →
  // READY) leaves nothing in flight and so can release a held verdict.
  bool starts_or_stays_in_flight =
      is_submitted_in_flight(to) && (from == node_state::ready || is_submitted_in_flight(from));
  return !starts_or_stays_in_flight;
}

namespace {

bool done(node_state s) {
  return s == node_state::completed || s == node_state::skipped;
}

/// A side-effect node that has or may have moved money. A node the provider
/// definitively FAILED does not count.
bool counts_as_side_effect(const plan_node& pn, const node_view& n, double escalate) {
  return pn.side_effect && (n.state == node_state::completed || n.state == node_state::unknown ||
                            is_in_flight(n, escalate));
}

struct census {
  bool all_done = true;
  bool any_failed = false;
  bool any_unknown = false;
  bool any_settled_unknown = false;
  bool any_in_flight = false;
  bool any_side_effect = false;
  bool any_ready_manual = false;
  bool any_ready_automatic = false;
};

census take_census(const plan& p, const std::vector<node_view>& nodes, double escalate) {
  census c;
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto& n = nodes[i];
    auto& pn = p.nodes[i];
    c.all_done &= done(n.state);
    c.any_failed |= n.state == node_state::failed;
    c.any_unknown |= n.state == node_state::unknown;
    c.any_settled_unknown |= is_settled_unknown(n, escalate);
    c.any_in_flight |= is_in_flight(n, escalate);
    c.any_side_effect |= counts_as_side_effect(pn, n, escalate);
    if (n.state == node_state::ready)
      (pn.is_manual() ? c.any_ready_manual : c.any_ready_automatic) = true;
  }
  return c;
}

/// Fan-in: every predecessor COMPLETED or SKIPPED.
std::vector<std::string> activations(const plan& p, const std::vector<node_view>& nodes) {
  std::vector<std::string> out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].state != node_state::blocked)
      continue;
    auto& preds = p.predecessors[i];
    if (std::all_of(preds.begin(), preds.end(), [&](int j) { return done(nodes[j].state); }))
      out.push_back(nodes[i].node_key);
  }
  return out;
}

std::vector<std::string> frontier_of(const std::vector<node_view>& nodes, double escalate) {
  std::vector<std::string> out;
  for (auto& n : nodes)
    if (n.state == node_state::ready || is_in_flight(n, escalate))
      out.push_back(n.node_key);
  return out;
}

struct verdict {
  std::optional<request_state> state;
  attention_reason attention = attention_reason::none;
};

/// The reference's five rules with SPEC §1's sharpenings.
verdict decide(const census& c, request_state current) {
  if (c.all_done)
    return {request_state::completed};
  bool broken = c.any_failed || c.any_unknown;
  if (c.any_in_flight) {
    // Settle before verdict; warn at once when rule 2 would apply.
    if (broken && c.any_side_effect)
      return {std::nullopt, attention_reason::side_effect_at_risk};
    return {};
  }
  if (c.any_settled_unknown || (broken && c.any_side_effect))
    return {request_state::manual_intervention, attention_reason::manual_intervention};
  if (c.any_failed)
    return {request_state::failed};
  if (c.any_ready_manual && !c.any_ready_automatic)
    return {request_state::waiting_manual_action, attention_reason::waiting_manual_action};
  if (current == request_state::waiting_manual_action)
    return {request_state::executing};
  return {};
}

} // namespace

reconcile_actions reconcile(const plan& p, const reconcile_input& in) {
  reconcile_actions out;
  out.dispatch_paused = in.dispatch_paused;
  out.attention_raised = in.attention_raised;
  out.frontier = in.frontier;
  if (!is_active(in.state))
    return out;

  const double escalate = in.unknown_escalate_seconds;
  auto nodes = in.nodes;
  auto pre = take_census(p, nodes, escalate);
  out.dispatch_paused = pre.any_failed || pre.any_unknown;
  if (!out.dispatch_paused) {
    out.activate = activations(p, nodes);
    for (auto& n : nodes)
      if (std::find(out.activate.begin(), out.activate.end(), n.node_key) != out.activate.end())
        n.state = node_state::ready;
  }
  out.frontier = frontier_of(nodes, escalate);
  out.frontier_changed = out.frontier != in.frontier;

  auto v = decide(take_census(p, nodes, escalate), in.state);
  if (v.state && *v.state != in.state)
    out.new_state = v.state;
  // request_attention once per episode: the flag remembers it was raised and
  // is cleared when nothing is broken any more (after a retry).
  bool broken = pre.any_failed || pre.any_unknown;
  if (v.attention == attention_reason::side_effect_at_risk) {
    if (!in.attention_raised)
      out.attention = v.attention;
    out.attention_raised = true;
  } else if (out.new_state && v.attention != attention_reason::none) {
    out.attention = v.attention;
    out.attention_raised = broken;
  } else if (!broken) {
    out.attention_raised = false;
  }
  return out;
}

} // namespace mg::domain
