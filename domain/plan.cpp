#include "domain/plan.hpp"

#include "domain/hash.hpp"

#include "domain/json.hpp"
#include "domain/refs.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <openssl/evp.h>
#include <set>
#include <stdexcept>

namespace mg::domain {

std::optional<int> plan::find(const std::string& key) const {
  auto it = index_of.find(key);
  if (it != index_of.end())
    return it->second;
  // A plan assembled by hand (not through compile_plan) has no index yet.
  if (index_of.empty())
    for (size_t i = 0; i < nodes.size(); ++i)
      if (nodes[i].node_key == key)
        return static_cast<int>(i);
  return std::nullopt;
}

std::vector<std::string> plan::successor_keys(const std::string& key) const {
  // Read from `edges` rather than `successors` so the answer does not depend
  // on whether compile_plan filled the adjacency lists; order is file order.
  std::vector<std::string> out;
  for (auto& [from, to] : edges)
    if (from == key)
      out.push_back(to);
  return out;
}

namespace {

// `$ref:input.<field>` reads the request's input_params, so no node may be
// called "input" or its refs would be ambiguous.
constexpr const char* input_namespace = "input";

struct collector {
  std::vector<compile_error> errors;
  void add(std::string field, std::string message) {
    errors.push_back({std::move(field), std::move(message)});
  }
};

std::string str(const json::value& v) {
  return std::string(v.GetString(), v.GetStringLength());
}

bool is_valid_key(const std::string& key) {
  return !key.empty() && std::all_of(key.begin(), key.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-';
  });
}

// Looks up an optional member; JSON null counts as absent so that
// generators writing `"signer_key": null` get the default.
const json::value* optional_member(const json::value& obj, const char* key) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || it->value.IsNull())
    return nullptr;
  return &it->value;
}

void read_string(const json::value& obj, const char* key, const std::string& path, bool required,
                 bool allow_empty, std::string& out, collector& c) {
  const json::value* v = optional_member(obj, key);
  if (!v) {
    if (required)
      c.add(path, "is required");
    return;
  }
  if (!v->IsString()) {
    c.add(path, "must be a string");
    return;
  }
  if (!allow_empty && v->GetStringLength() == 0) {
    c.add(path, "must not be empty");
    return;
  }
  out = str(*v);
}

void read_bool(const json::value& obj, const char* key, const std::string& path, bool& out,
               collector& c) {
  const json::value* v = optional_member(obj, key);
  if (!v)
    return;
  if (!v->IsBool()) {
    c.add(path, "must be a boolean");
    return;
  }
  out = v->GetBool();
}

void read_object(const json::value& obj, const char* key, const std::string& path,
                 std::string& out_json, collector& c) {
  const json::value* v = optional_member(obj, key);
  if (!v)
    return;
  if (!v->IsObject()) {
    c.add(path, "must be an object");
    return;
  }
  out_json = json::dump(*v);
}

void read_header(const json::value& root, plan& p, collector& c) {
  read_string(root, "template_key", "template_key", true, false, p.template_key, c);
  const json::value* version = optional_member(root, "version");
  if (!version)
    c.add("version", "is required");
  else if (!version->IsInt() || version->GetInt() < 1)
    c.add("version", "must be an integer >= 1");
  else
    p.version = version->GetInt();
  read_object(root, "risk_controls", "risk_controls", p.risk_controls_json, c);
}

plan_node read_node(const json::value& v, const std::string& path, collector& c) {
  plan_node n;
  if (!v.IsObject()) {
    c.add(path, "must be an object");
    return n;
  }
  read_string(v, "node_key", path + ".node_key", true, false, n.node_key, c);
  if (!n.node_key.empty() && !is_valid_key(n.node_key))
    c.add(path + ".node_key", "must contain only letters, digits, '_' and '-': " + n.node_key);
  if (n.node_key == input_namespace)
    c.add(path + ".node_key", "'input' is reserved for $ref:input.<field>");
  read_string(v, "node_kind", path + ".node_kind", false, false, n.node_kind, c);
  read_string(v, "action_type", path + ".action_type", true, false, n.action_type, c);
  read_string(v, "executor_key", path + ".executor_key", false, false, n.executor_key, c);
  read_string(v, "signer_key", path + ".signer_key", false, true, n.signer_key, c);
  read_bool(v, "side_effect", path + ".side_effect", n.side_effect, c);
  read_bool(v, "signing_required", path + ".signing_required", n.signing_required, c);
  read_object(v, "config", path + ".config", n.config_json, c);
  read_object(v, "timeout_policy", path + ".timeout_policy", n.timeout_policy_json, c);
  return n;
}

void read_nodes(const json::value& root, plan& p, collector& c) {
  const json::value* nodes = optional_member(root, "nodes");
  if (!nodes) {
    c.add("nodes", "is required");
    return;
  }
  if (!nodes->IsArray()) {
    c.add("nodes", "must be an array");
    return;
  }
  if (nodes->Empty())
    c.add("nodes", "at least one node is required");
  for (rapidjson::SizeType i = 0; i < nodes->Size(); ++i)
    p.nodes.push_back(read_node((*nodes)[i], "nodes[" + std::to_string(i) + "]", c));
}

// The first occurrence of a key wins, so edges and refs naming a duplicated
// key are still checked against something instead of cascading errors.
void index_nodes(plan& p, collector& c) {
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const std::string& key = p.nodes[i].node_key;
    if (key.empty())
      continue;
    auto [it, inserted] = p.index_of.emplace(key, static_cast<int>(i));
    if (!inserted)
      c.add("nodes[" + std::to_string(i) + "].node_key", "duplicate node key '" + key +
                                                             "' (first at nodes[" +
                                                             std::to_string(it->second) + "])");
  }
}

// Reads `edges` into p.edges (every well-formed pair, file order) and fills
// predecessors/successors from the edges that are also semantically valid.
void read_edges(const json::value& root, plan& p, collector& c) {
  p.predecessors.assign(p.nodes.size(), {});
  p.successors.assign(p.nodes.size(), {});
  const json::value* edges = optional_member(root, "edges");
  if (!edges)
    return;
  if (!edges->IsArray()) {
    c.add("edges", "must be an array");
    return;
  }
  std::set<std::pair<int, int>> seen;
  for (rapidjson::SizeType i = 0; i < edges->Size(); ++i) {
    const json::value& e = (*edges)[i];
    const std::string path = "edges[" + std::to_string(i) + "]";
    if (!e.IsArray() || e.Size() != 2 || !e[0].IsString() || !e[1].IsString()) {
      c.add(path, "must be a [from, to] pair of node keys");
      continue;
    }
    std::string from = str(e[0]), to = str(e[1]);
    p.edges.emplace_back(from, to);
    auto fi = p.index_of.find(from), ti = p.index_of.find(to);
    if (fi == p.index_of.end())
      c.add(path + "[0]", "unknown node '" + from + "'");
    if (ti == p.index_of.end())
      c.add(path + "[1]", "unknown node '" + to + "'");
    if (fi == p.index_of.end() || ti == p.index_of.end())
      continue;
    if (fi->second == ti->second) {
      c.add(path, "self edge on node '" + from + "'");
      continue;
    }
    if (!seen.emplace(fi->second, ti->second).second) {
      c.add(path, "duplicate edge " + from + " -> " + to);
      continue;
    }
    p.successors[fi->second].push_back(ti->second);
    p.predecessors[ti->second].push_back(fi->second);
  }
}

// Tarjan's strongly connected components: every component with more than one
// node is a cycle (self edges were already refused and left out), which lets
// the error name exactly the nodes involved rather than everything downstream.
std::vector<std::vector<int>> find_cycles(const plan& p) {
  const int n = static_cast<int>(p.nodes.size());
  std::vector<int> index(n, -1), low(n, 0);
  std::vector<bool> on_stack(n, false);
  std::vector<int> stack;
  std::vector<std::vector<int>> cycles;
  int counter = 0;
  std::function<void(int)> visit = [&](int v) {
    index[v] = low[v] = counter++;
    stack.push_back(v);
    on_stack[v] = true;
    for (int w : p.successors[v]) {
      if (index[w] < 0) {
        visit(w);
        low[v] = std::min(low[v], low[w]);
      } else if (on_stack[w]) {
        low[v] = std::min(low[v], index[w]);
      }
    }
    if (low[v] != index[v])
      return;
    std::vector<int> component;
    int w;
    do {
      w = stack.back();
      stack.pop_back();
      on_stack[w] = false;
      component.push_back(w);
    } while (w != v);
    if (component.size() > 1) {
      std::sort(component.begin(), component.end());
      cycles.push_back(std::move(component));
    }
  };
  for (int v = 0; v < n; ++v)
    if (index[v] < 0)
      visit(v);
  return cycles;
}

void check_cycles(const plan& p, collector& c) {
  for (auto& cycle : find_cycles(p)) {
    std::string names;
    for (int v : cycle)
      names += (names.empty() ? "" : ", ") + p.nodes[v].node_key;
    c.add("edges", "cycle among nodes: " + names);
  }
}

// Direct and transitive predecessors of `node`, excluding the node itself
// (relevant only when a cycle makes it its own ancestor).
std::set<int> ancestors(const plan& p, int node) {
  std::set<int> seen;
  std::vector<int> todo = p.predecessors[node];
  while (!todo.empty()) {
    int v = todo.back();
    todo.pop_back();
    if (v == node || !seen.insert(v).second)
      continue;
    todo.insert(todo.end(), p.predecessors[v].begin(), p.predecessors[v].end());
  }
  return seen;
}

// Returns an empty string when `ref` (the text after `$ref:`) is acceptable
// for nodes[i], otherwise why not.
std::string ref_problem(const plan& p, int i, const std::set<int>& preds, const std::string& ref) {
  auto dot = ref.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == ref.size())
    return "malformed $ref '" + std::string(ref_prefix) + ref +
           "' (expected $ref:input.<field> or $ref:<node_key>.<field>)";
  std::string source = ref.substr(0, dot);
  if (source == input_namespace)
    return {};
  auto it = p.index_of.find(source);
  if (it == p.index_of.end())
    return "$ref names unknown node '" + source + "'";
  if (!preds.count(it->second))
    return "$ref names node '" + source + "', which is not a predecessor of '" +
           p.nodes[i].node_key + "'";
  return {};
}

void check_refs(const plan& p, collector& c) {
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    auto config = json::parse(p.nodes[i].config_json);
    if (!config || !config->IsObject())
      continue; // already reported by read_object
    const std::set<int> preds = ancestors(p, static_cast<int>(i));
    const std::string prefix = ref_prefix;
    // Only top-level values: that is all resolve_refs replaces at dispatch.
    for (auto& m : config->GetObject()) {
      if (!m.value.IsString())
        continue;
      std::string text = str(m.value);
      if (text.rfind(prefix, 0) != 0)
        continue;
      std::string problem = ref_problem(p, static_cast<int>(i), preds, text.substr(prefix.size()));
      if (!problem.empty())
        c.add("nodes[" + std::to_string(i) + "].config." + str(m.name), problem);
    }
  }
}

/// Whether nodes[i] moves or watches value on an EVM chain: the `evm`
/// executor, or an EVM action type under any executor (a sibling's).
bool is_evm_node(const plan_node& n) {
  return n.executor_key == "evm" || n.action_type == "evm_transfer" ||
         n.action_type == "erc20_transfer" || n.action_type == "destination_chain_finality_observe";
}

/// SPEC §3: what decides where money goes is pinned by the template, so an
/// EVM node's chain, token and decimals must be literals, never `$ref`.
void check_pinned_evm_fields(const plan& p, collector& c) {
  const std::string prefix = ref_prefix;
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    if (!is_evm_node(p.nodes[i]))
      continue;
    auto config = json::parse(p.nodes[i].config_json);
    if (!config || !config->IsObject())
      continue;
    for (const char* field : {"chain_id", "token", "decimals"}) {
      auto it = config->FindMember(field);
      if (it != config->MemberEnd() && it->value.IsString() && str(it->value).rfind(prefix, 0) == 0)
        c.add("nodes[" + std::to_string(i) + "].config." + field,
              "must be a literal for an EVM node: it is pinned by the template, not taken from "
              "the request");
    }
  }
}

json::value string_value(const std::string& s, json::document::AllocatorType& a) {
  return json::value(s.c_str(), static_cast<rapidjson::SizeType>(s.size()), a);
}

} // namespace

compile_result compile_plan(const std::string& plan_json) {
  compile_result result;
  std::string parse_error;
  auto doc = json::parse(plan_json, &parse_error);
  if (!doc) {
    result.errors.push_back({"$", "invalid JSON: " + parse_error});
    return result;
  }
  if (!doc->IsObject()) {
    result.errors.push_back({"$", "plan must be a JSON object"});
    return result;
  }
  collector c;
  plan p;
  read_header(*doc, p, c);
  read_nodes(*doc, p, c);
  index_nodes(p, c);
  read_edges(*doc, p, c);
  check_cycles(p, c);
  check_refs(p, c);
  check_pinned_evm_fields(p, c);
  if (!c.errors.empty()) {
    result.errors = std::move(c.errors);
    return result;
  }
  result.graph_hash = graph_hash(p);
  result.compiled = std::move(p);
  return result;
}

// The hashed document, serialised with json::canonical (object keys sorted
// byte-wise at every level, no whitespace):
//
//   {"edges": [[from, to], ...],                 // file order
//    "nodes": [{"action_type": str,              // file order
//               "config": object,
//               "executor_key": str,
//               "node_key": str,
//               "node_kind": str,
//               "side_effect": bool,
//               "signer_key": str,               // only when non-empty
//               "signing_required": bool}, ...]}
//
// Left out on purpose: timeout_policy (reference: editing observe_seconds
// must not look like plan drift), template_key, version and risk_controls
// (they identify or gate the template, they are not the graph).
std::string graph_hash(const plan& p) {
  json::document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  json::value nodes(rapidjson::kArrayType);
  for (auto& n : p.nodes) {
    json::value o(rapidjson::kObjectType);
    o.AddMember("node_key", string_value(n.node_key, a), a);
    o.AddMember("node_kind", string_value(n.node_kind, a), a);
    o.AddMember("action_type", string_value(n.action_type, a), a);
    o.AddMember("executor_key", string_value(n.executor_key, a), a);
    if (!n.signer_key.empty())
      o.AddMember("signer_key", string_value(n.signer_key, a), a);
    o.AddMember("side_effect", n.side_effect, a);
    o.AddMember("signing_required", n.signing_required, a);
    json::document config = json::parse_trusted(n.config_json, "plan node config");
    o.AddMember("config", json::value(config, a), a);
    nodes.PushBack(o, a);
  }
  json::value edges(rapidjson::kArrayType);
  for (auto& [from, to] : p.edges) {
    json::value e(rapidjson::kArrayType);
    e.PushBack(string_value(from, a), a);
    e.PushBack(string_value(to, a), a);
    edges.PushBack(e, a);
  }
  d.AddMember("nodes", nodes, a);
  d.AddMember("edges", edges, a);
  return sha256_hex(json::canonical(d));
}

} // namespace mg::domain
