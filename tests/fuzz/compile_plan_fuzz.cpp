// compile_plan (template files and proposals, SPEC §3), then resolve_refs
// over each compiled node's config as dispatch would. Invariants: no
// exception; compiled xor errors; a compiled plan has unique keys, edges
// between known nodes, an acyclic graph in which every $ref:<node>.<field>
// names a predecessor, a 64-hex graph_hash that is deterministic and equal
// for the canonical form of the same JSON.
#include <functional>
#include <set>

#include "domain/json.hpp"
#include "domain/plan.hpp"
#include "domain/refs.hpp"
#include "tests/fuzz/fuzz_check.hpp"
#include "tests/fuzz/json_walk.hpp"

using namespace mg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(fuzz::bytes(data, size));
  auto r = domain::compile_plan(text);
  MG_FUZZ_CHECK(r.compiled.has_value() == r.errors.empty(), "compiled xor errors");
  if (!r.compiled)
    return 0;
  const auto& p = *r.compiled;
  MG_FUZZ_CHECK(r.graph_hash.size() == 64 && fuzz::is_lower_hex(r.graph_hash), "graph_hash hex");
  MG_FUZZ_CHECK(domain::graph_hash(p) == r.graph_hash, "graph_hash deterministic");

  std::set<std::string> keys;
  for (const auto& n : p.nodes)
    MG_FUZZ_CHECK(keys.insert(n.node_key).second, "unique node keys");
  for (const auto& [from, to] : p.edges)
    MG_FUZZ_CHECK(keys.count(from) && keys.count(to), "edges name known nodes");
  MG_FUZZ_CHECK(p.predecessors.size() == p.nodes.size() && p.successors.size() == p.nodes.size(),
                "adjacency filled");

  // Acyclic: a depth-first walk finds no back edge (iterative colouring).
  std::vector<int> colour(p.nodes.size(), 0);
  for (size_t s = 0; s < p.nodes.size(); ++s) {
    if (colour[s])
      continue;
    std::vector<std::pair<int, size_t>> stack{{int(s), 0}};
    colour[s] = 1;
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < p.successors[n].size()) {
        int m = p.successors[n][next++];
        MG_FUZZ_CHECK(colour[m] != 1, "graph is acyclic");
        if (!colour[m]) {
          colour[m] = 1;
          stack.push_back({m, 0});
        }
      } else {
        colour[n] = 2;
        stack.pop_back();
      }
    }
  }

  // Each node's refs resolve once every predecessor completed with every
  // referenced field, or name what is missing; never a throw.
  for (const auto& n : p.nodes) {
    auto cfg = json::parse(n.config_json);
    MG_FUZZ_CHECK(cfg && cfg->IsObject(), "node config is an object");
    std::map<std::string, std::string> completed;
    for (const auto& other : p.nodes)
      completed[other.node_key] = "{}";
    auto res = domain::resolve_refs(n.config_json, "{}", completed);
    if (res.ok) {
      auto out = json::parse(res.config_json);
      MG_FUZZ_CHECK(out && out->IsObject() && out->MemberCount() == cfg->MemberCount(),
                    "resolved config keeps its members");
    } else {
      MG_FUZZ_CHECK(!res.error.empty(), "a failed resolution says why");
    }
  }

  // The same JSON written canonically compiles to the same hash.
  auto doc = json::parse(text);
  MG_FUZZ_CHECK(doc.has_value(), "a compiled plan is JSON");
  auto again = domain::compile_plan(json::canonical(*doc));
  MG_FUZZ_CHECK(again.compiled.has_value(), "canonical form compiles");
  if (!fuzz::has_double(*doc))
    MG_FUZZ_CHECK(again.graph_hash == r.graph_hash, "canonical form, same hash");
  return 0;
}
