// The MG_API_KEYS_FILE parser. Invariants: only std::invalid_argument, and
// its message never holds a secret of the file (any string of 16+ bytes
// given as a "secret"); accepted keys have unique non-empty ids, secrets of
// 16+ bytes and non-empty scope lists without repeats.
#include <set>
#include <stdexcept>

#include "domain/api_auth.hpp"
#include "domain/json.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mg;

namespace {

/// Every string value of a "secret" member anywhere in the document, and
/// every other string (names and values) in `others` (iterative walk).
std::vector<std::string> secrets_in(const json::value& root, std::vector<std::string>& others) {
  std::vector<std::string> out;
  std::vector<const json::value*> todo{&root};
  while (!todo.empty()) {
    const json::value* v = todo.back();
    todo.pop_back();
    if (v->IsObject()) {
      for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it) {
        others.emplace_back(it->name.GetString(), it->name.GetStringLength());
        if (std::string_view(it->name.GetString()) == "secret" && it->value.IsString())
          out.emplace_back(it->value.GetString(), it->value.GetStringLength());
        else if (it->value.IsString())
          others.emplace_back(it->value.GetString(), it->value.GetStringLength());
        todo.push_back(&it->value);
      }
    } else if (v->IsArray()) {
      for (const auto& e : v->GetArray()) {
        if (e.IsString())
          others.emplace_back(e.GetString(), e.GetStringLength());
        todo.push_back(&e);
      }
    }
  }
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::bytes(data, size);
  std::vector<api::api_key> keys;
  try {
    keys = api::parse_api_keys(text);
  } catch (const std::invalid_argument& e) {
    if (auto doc = json::parse(text)) {
      std::vector<std::string> others;
      for (const auto& secret : secrets_in(*doc, others)) {
        // A secret that is also written elsewhere (as a key id, say) may
        // appear through that other place.
        bool elsewhere = false;
        for (const auto& o : others)
          elsewhere = elsewhere || o.find(secret) != std::string::npos;
        if (secret.size() >= 16 && !elsewhere)
          MG_FUZZ_CHECK(std::string(e.what()).find(secret) == std::string::npos,
                        "the error never echoes a secret");
      }
    }
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
