#pragma once
// Template plans (SPEC §3): parsing, compile-time checks and graph_hash.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mg::domain {

struct plan_node {
  std::string node_key;
  std::string node_kind = "action";
  std::string action_type;
  std::string executor_key = "sim";
  std::string signer_key; // empty: no signer binding
  bool side_effect = false;
  bool signing_required = false;
  std::string config_json = "{}";         // object, may hold top-level "$ref:..." strings
  std::string timeout_policy_json = "{}"; // object; not part of graph_hash

  /// Action types starting with `manual_` are completed by an operator.
  bool is_manual() const { return action_type.rfind("manual_", 0) == 0; }
};

struct plan {
  std::string template_key;
  int version = 1;
  std::string risk_controls_json = "{}";
  std::vector<plan_node> nodes; // in file order
  std::vector<std::pair<std::string, std::string>> edges;

  // Filled by compile_plan: indices into `nodes`.
  std::vector<std::vector<int>> predecessors;
  std::vector<std::vector<int>> successors;
  std::map<std::string, int> index_of;

  std::optional<int> find(const std::string& key) const;
  /// Keys of the nodes that have an edge from `key`.
  std::vector<std::string> successor_keys(const std::string& key) const;
};

struct compile_error {
  std::string field;   // e.g. "nodes[2].config.venue", "edges[0]"
  std::string message; // human readable
};

struct compile_result {
  std::optional<plan> compiled; // set only when errors is empty
  std::vector<compile_error> errors;
  std::string graph_hash; // set only when compiled
};

/// Parses and checks a plan (SPEC §3): unique node keys, edges naming known
/// nodes, acyclic graph, every top-level `$ref:<node_key>.<field>` in a
/// node's config naming a (direct or transitive) predecessor, or
/// `$ref:input.<field>`; an EVM node (`evm` executor or an EVM action type)
/// whose config.chain_id, token or decimals is a `$ref` (they are pinned by
/// the template, SPEC §3). Every error is listed, none short-circuits the rest
/// (except unparseable JSON).
compile_result compile_plan(const std::string& plan_json);

/// SHA-256 (lower-case hex) of the canonical JSON of nodes and edges without
/// timeout_policy.
std::string graph_hash(const plan& p);

} // namespace mg::domain
