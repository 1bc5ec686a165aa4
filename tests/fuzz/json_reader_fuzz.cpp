// libFuzzer target for the hostile-input JSON reader (domain/json_reader):
// whatever the bytes, it must not crash or recurse; what it accepts must
// keep its invariants, and its serialisation must read back to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "domain/json.hpp"
#include "domain/json_reader.hpp"
#include "domain/utf8.hpp"

namespace {

void require(bool ok) {
  if (!ok)
    std::abort();
}

/// Depth ≤ 64, no member name twice in one object, every string and name
/// clean UTF-8 without U+0000: checked on the document, without recursion.
void check_invariants(const mg::json::value& root) {
  struct item {
    const mg::json::value* v;
    int depth;
  };
  std::vector<item> todo{{&root, 0}};
  while (!todo.empty()) {
    auto [v, depth] = todo.back();
    todo.pop_back();
    if (v->IsString())
      require(mg::domain::is_clean_text({v->GetString(), v->GetStringLength()}));
    if (v->IsArray()) {
      require(depth + 1 <= mg::json::max_input_depth);
      for (const auto& e : v->GetArray())
        todo.push_back({&e, depth + 1});
    }
    if (v->IsObject()) {
      require(depth + 1 <= mg::json::max_input_depth);
      std::vector<std::string_view> names;
      for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it) {
        std::string_view name(it->name.GetString(), it->name.GetStringLength());
        require(mg::domain::is_clean_text(name));
        for (auto seen : names)
          require(seen != name);
        names.push_back(name);
        todo.push_back({&it->value, depth + 1});
      }
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string why;
  auto first = mg::json::read(input, &why);
  if (!first) {
    require(!why.empty());
    // parse() is the same reader: it refuses the same bytes.
    require(!mg::json::parse(input).has_value());
    return 0;
  }
  check_invariants(first->doc);
  require(mg::domain::is_valid_utf8(first->text));

  // Its own serialisation reads back to the same serialisation and members.
  auto second = mg::json::read(first->text);
  require(second.has_value());
  require(second->text == first->text);
  require(second->members == first->members);
  // Each member's text is itself one JSON value that serialises to itself.
  for (const auto& [name, text] : first->members) {
    auto member = mg::json::read(text);
    require(member.has_value());
    require(member->text == text);
  }
  // dump/canonical never fail on what the reader accepted, and canonical
  // is stable.
  auto canonical = mg::json::canonical(first->doc);
  auto again = mg::json::read(canonical);
  require(again.has_value());
  require(mg::json::canonical(again->doc) == canonical);
  (void)mg::json::dump(first->doc);
  return 0;
}
