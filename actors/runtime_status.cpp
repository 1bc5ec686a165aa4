#include "actors/runtime_status.hpp"

#include "domain/json.hpp"

namespace mg::actors {

std::string supervision_json(caf::actor_system& sys, const runtime& rt,
                             std::chrono::milliseconds timeout) {
  auto sup = rt.supervisor();
  if (!sup)
    return "[]";
  std::string out = "[]";
  caf::scoped_actor self{sys};
  self->request(sup, timeout, status_atom::value)
      .receive([&](const std::string& status) { out = status; }, [](const caf::error&) {});
  return out;
}

bool core_group_running(const std::string& supervision) {
  auto doc = json::parse(supervision);
  if (!doc || !doc->IsArray())
    return false;
  int core = 0;
  for (auto& m : doc->GetArray()) {
    if (!m.IsObject() || json::get_string(m, "group") != "core")
      continue;
    ++core;
    if (!m.HasMember("running") || !m["running"].IsBool() || !m["running"].GetBool())
      return false;
  }
  return core > 0;
}

std::string running_members(const std::string& supervision) {
  auto doc = json::parse(supervision);
  std::string names;
  if (!doc || !doc->IsArray())
    return names;
  for (auto& m : doc->GetArray()) {
    if (!m.IsObject() || !m.HasMember("running") || !m["running"].IsBool() ||
        !m["running"].GetBool())
      continue;
    names += (names.empty() ? "" : ",") + json::get_string(m, "name");
  }
  return names;
}

} // namespace mg::actors
