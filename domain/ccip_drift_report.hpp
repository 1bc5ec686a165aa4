#pragma once
// The CCIP sidecar's drift report (GET {MG_CCIP_SIDECAR_URL}/v1/registry/drift):
//
//   {"items": [{"key": "onramp:1:137",          // 1..200 characters, unique
//               "state": "ok" | "drift",
//               "expected": "0x…",              // optional string (≤ 1000)
//               "observed": "0x…",              // optional string (≤ 1000)
//               "detail": {…}}]}                // optional JSON object
//
// The sidecar lists every registry entry it checked; an entry it leaves out
// keeps its last recorded state. A report is taken whole or not at all: one
// malformed item refuses the report, so nothing is half-recorded.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mg::domain {

struct ccip_drift_item {
  std::string key;
  bool drift = false;
  std::string expected;
  std::string observed;
  std::string detail_json = "{}"; // a JSON object
};

inline constexpr size_t ccip_drift_max_items = 10000;

/// The items, or nullopt with `error` naming what is wrong (never echoes
/// more than the offending member's name and index).
std::optional<std::vector<ccip_drift_item>> parse_ccip_drift_report(std::string_view body,
                                                                    std::string& error);

} // namespace mg::domain
