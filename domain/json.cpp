#include "domain/json.hpp"

#include "domain/utf8.hpp"

#include <algorithm>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <stdexcept>
#include <vector>

namespace mg::json {

std::optional<document> parse(std::string_view text, std::string* error) {
  auto r = read(text, error);
  if (!r)
    return std::nullopt;
  return std::move(r->doc);
}

document parse_trusted(std::string_view text, const char* what) {
  std::string err;
  // Our own columns nest a few levels around what entered (≤ 64); jsonb has
  // already dropped duplicate names.
  auto r = read(text, &err, read_limits{trusted_max_depth, false});
  if (!r)
    throw std::runtime_error(std::string("invalid JSON in ") + what + ": " + err);
  return std::move(r->doc);
}

namespace {

using writer_t = rapidjson::Writer<rapidjson::StringBuffer>;

/// One open container while writing: its children in the order written.
struct frame {
  bool object = false;
  std::vector<const value::Member*> members; // objects
  const value* elements = nullptr;           // arrays
  size_t next = 0;
  size_t size = 0;
};

frame open_frame(const value& v, bool sorted, writer_t& w) {
  frame f;
  if (v.IsObject()) {
    f.object = true;
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it)
      f.members.push_back(&*it);
    if (sorted)
      std::sort(f.members.begin(), f.members.end(), [](auto* a, auto* b) {
        return std::string_view(a->name.GetString(), a->name.GetStringLength()) <
               std::string_view(b->name.GetString(), b->name.GetStringLength());
      });
    f.size = f.members.size();
    w.StartObject();
  } else {
    f.elements = v.Begin();
    f.size = v.Size();
    w.StartArray();
  }
  return f;
}

/// Writes `root` without recursing: an explicit stack of open containers,
/// so a deep value (built in code, or read with a high limit) cannot
/// exhaust the thread's stack.
std::string write(const value& root, bool sorted) {
  rapidjson::StringBuffer buf;
  writer_t w(buf);
  std::vector<frame> stack;
  auto visit = [&](const value& v) {
    if (v.IsObject() || v.IsArray())
      stack.push_back(open_frame(v, sorted, w));
    else
      v.Accept(w); // a scalar
  };
  visit(root);
  while (!stack.empty()) {
    frame& f = stack.back();
    if (f.next == f.size) {
      if (f.object)
        w.EndObject();
      else
        w.EndArray();
      stack.pop_back();
      continue;
    }
    const size_t i = f.next++;
    if (f.object) {
      const auto* m = f.members[i];
      w.Key(m->name.GetString(), m->name.GetStringLength());
      visit(m->value); // may reallocate `stack`: `f` is not used after this
    } else {
      visit(f.elements[i]);
    }
  }
  return std::string(buf.GetString(), buf.GetSize());
}

} // namespace

std::string dump(const value& v) {
  return write(v, false);
}

std::string canonical(const value& v) {
  return write(v, true);
}

std::string merge_members(std::string_view base, std::string_view overlay) {
  auto extra = parse(overlay);
  if (!extra || !extra->IsObject() || extra->MemberCount() == 0)
    return std::string(base);
  auto merged = parse_trusted(base, "merge base");
  if (!merged.IsObject())
    merged.SetObject();
  auto& alloc = merged.GetAllocator();
  for (auto& m : extra->GetObject()) {
    merged.RemoveMember(m.name);
    merged.AddMember(value(m.name, alloc), value(m.value, alloc), alloc);
  }
  return dump(merged);
}

std::string get_string(const value& v, const char* key, std::string fallback) {
  if (!v.IsObject())
    return fallback;
  auto it = v.FindMember(key);
  if (it == v.MemberEnd() || !it->value.IsString())
    return fallback;
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

std::string quote(std::string_view s) {
  // Text often echoes input: ill-formed bytes become U+FFFD so the JSON
  // this goes into stays valid UTF-8.
  const std::string text = domain::to_valid_utf8(s);
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  return std::string(buf.GetString(), buf.GetSize());
}

} // namespace mg::json
