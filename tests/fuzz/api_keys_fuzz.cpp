// The MG_API_KEYS_FILE parser. Invariants: only std::invalid_argument, and
// its message does not depend on any secret's content (the same file with
// every "secret" string replaced by another of the same length gives the
// same message, so no byte of a secret can be echoed); accepted keys have
// unique non-empty ids, secrets of 16+ bytes and non-empty scope lists
// without repeats.
#include <set>
#include <stdexcept>

#include "domain/api_auth.hpp"
#include "domain/json.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mg;

namespace {

/// Replaces every byte of every "secret" string member anywhere in the
/// document by another byte (iterative walk); true when any was found.
bool scramble_secrets(json::document& doc) {
  bool any = false;
  std::vector<json::value*> todo{&doc};
  while (!todo.empty()) {
    json::value* v = todo.back();
    todo.pop_back();
    if (v->IsObject()) {
      for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it) {
        if (std::string_view(it->name.GetString(), it->name.GetStringLength()) == "secret" &&
            it->value.IsString()) {
          std::string s(it->value.GetString(), it->value.GetStringLength());
          for (auto& c : s)
            c = c == 'x' ? 'y' : 'x';
          it->value.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()),
                              doc.GetAllocator());
          any = true;
        }
        todo.push_back(&it->value);
      }
    } else if (v->IsArray()) {
      for (auto& e : v->GetArray())
        todo.push_back(&e);
    }
  }
  return any;
}

std::string error_of(std::string_view text) {
  try {
    api::parse_api_keys(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::bytes(data, size);
  std::vector<api::api_key> keys;
  try {
    keys = api::parse_api_keys(text);
  } catch (const std::invalid_argument& e) {
    auto doc = json::parse(text);
    if (doc && scramble_secrets(*doc))
      MG_FUZZ_CHECK(error_of(json::dump(*doc)) == e.what(),
                    "the error does not depend on a secret's content");
    return 0;
  }
  std::set<std::string> ids;
  for (const auto& k : keys) {
    MG_FUZZ_CHECK(!k.key_id.empty() && ids.insert(k.key_id).second, "unique non-empty key ids");
    MG_FUZZ_CHECK(k.secret.size() >= 16, "secret of 16+ bytes");
    MG_FUZZ_CHECK(!k.scopes.empty(), "at least one scope");
    std::set<api::scope> scopes(k.scopes.begin(), k.scopes.end());
    MG_FUZZ_CHECK(scopes.size() == k.scopes.size(), "no repeated scope");
  }
  return 0;
}
