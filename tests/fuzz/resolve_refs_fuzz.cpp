// resolve_refs at dispatch: a node's config, the request's input_params and
// completed nodes' provider_refs (all JSON text from templates, the API and
// executors). Input: config \x00 input_params \x00 node_key \x00 refs.
// Invariants: no exception; ok xor error; a resolved config is an object
// with the same member names where every "$ref:" string was replaced by
// the member it names (copied with its JSON type), others kept.
#include "domain/json.hpp"
#include "domain/refs.hpp"
#include "tests/fuzz/fuzz_check.hpp"
#include "tests/fuzz/json_walk.hpp"

using namespace mg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto f = fuzz::split(fuzz::bytes(data, size), '\0', 4);
  std::map<std::string, std::string> completed{{f[2], f[3]}};
  auto r = domain::resolve_refs(f[0], f[1], completed);
  MG_FUZZ_CHECK(r.ok == r.error.empty(), "ok xor error");
  if (!r.ok)
    return 0;
  auto in = json::parse(f[0]);
  auto out = json::parse(r.config_json);
  MG_FUZZ_CHECK(in && in->IsObject() && out && out->IsObject(), "objects in and out");
  MG_FUZZ_CHECK(in->MemberCount() == out->MemberCount(), "same member count");
  auto a = in->MemberBegin();
  auto b = out->MemberBegin();
  for (; a != in->MemberEnd(); ++a, ++b) {
    MG_FUZZ_CHECK(a->name == b->name, "same member names in order");
    bool is_ref =
        a->value.IsString() && std::string_view(a->value.GetString(), a->value.GetStringLength())
                                       .rfind(domain::ref_prefix, 0) == 0;
    if (!is_ref) {
      MG_FUZZ_CHECK(fuzz::has_double(a->value) ||
                        json::canonical(a->value) == json::canonical(b->value),
                    "others kept");
      continue;
    }
    std::string ref(a->value.GetString() + 5, a->value.GetStringLength() - 5);
    auto dot = ref.find('.');
    MG_FUZZ_CHECK(dot != std::string::npos, "a resolved ref has a dot");
    const std::string source = ref.substr(0, dot), field = ref.substr(dot + 1);
    const std::string& from_text = source == "input" ? f[1] : f[3];
    auto from = json::parse(from_text);
    MG_FUZZ_CHECK(from && from->IsObject(), "the ref's source is an object");
    auto it = from->FindMember(json::value(field.c_str(), rapidjson::SizeType(field.size())));
    MG_FUZZ_CHECK(it != from->MemberEnd() &&
                      (fuzz::has_double(it->value) ||
                       json::canonical(it->value) == json::canonical(b->value)),
                  "the ref became the named member");
  }
  return 0;
}
