#pragma once
// JSON helpers of the fuzz targets.
#include <algorithm>
#include <string_view>
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

/// Whether an object in `root` repeats a member name (iterative walk).
/// canonical() sorts members by name, so repeated names keep no stable
/// order; such documents are refused by SPEC §5 and compared by no target.
inline bool has_duplicate_names(const json::value& root) {
  std::vector<const json::value*> todo{&root};
  while (!todo.empty()) {
    const json::value* v = todo.back();
    todo.pop_back();
    if (v->IsObject()) {
      std::vector<std::string_view> names;
      for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it) {
        names.emplace_back(it->name.GetString(), it->name.GetStringLength());
        todo.push_back(&it->value);
      }
      std::sort(names.begin(), names.end());
      if (std::adjacent_find(names.begin(), names.end()) != names.end())
        return true;
    } else if (v->IsArray()) {
      for (const auto& e : v->GetArray())
        todo.push_back(&e);
    }
  }
  return false;
}

} // namespace mg::fuzz
