// json::merge_members sets a provider's answered refs (hostile bytes) over a
// node's stored refs before an inline observation. Any overlay must leave a
// valid JSON object: the base unchanged when the overlay is no object, else
// every overlay member present with its value and the base's other members
// kept.
#include <string>

#include "domain/json.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto overlay = fuzz::bytes(data, size);
  const std::string base = R"({"sim_ref":"k:1","kept":[1,{"x":null}],"tx_hash":"0x00"})";
  auto merged_text = json::merge_members(base, overlay);
  auto merged = json::parse_trusted(merged_text, "merged");
  MG_FUZZ_CHECK(merged.IsObject(), "the merge is an object");
  auto extra = json::parse(overlay);
  if (!extra || !extra->IsObject() || extra->MemberCount() == 0) {
    MG_FUZZ_CHECK(merged_text == base, "a non-object overlay changes nothing");
    return 0;
  }
  for (auto& m : extra->GetObject()) {
    auto it = merged.FindMember(m.name);
    MG_FUZZ_CHECK(it != merged.MemberEnd() &&
                      json::canonical(it->value) == json::canonical(m.value),
                  "every overlay member is set");
  }
  if (!extra->HasMember("kept"))
    MG_FUZZ_CHECK(json::canonical(merged["kept"]) == R"([1,{"x":null}])", "other members kept");
  return 0;
}
