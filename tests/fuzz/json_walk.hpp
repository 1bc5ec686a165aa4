#pragma once
// JSON helpers of the fuzz targets.
#include <vector>

#include "domain/json.hpp"

namespace mg::fuzz {

/// Whether `root` holds a floating-point number anywhere (iterative walk).
/// mg::json reads such numbers as doubles without full precision, so a
/// dump → parse round trip may move them by an ulp: the targets compare
/// serialisations only of documents without one.
inline bool has_double(const json::value& root) {
  std::vector<const json::value*> todo{&root};
  while (!todo.empty()) {
    const json::value* v = todo.back();
    todo.pop_back();
    if (v->IsDouble())
      return true;
    if (v->IsObject())
      for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it)
        todo.push_back(&it->value);
    else if (v->IsArray())
      for (const auto& e : v->GetArray())
        todo.push_back(&e);
  }
  return false;
}

} // namespace mg::fuzz
