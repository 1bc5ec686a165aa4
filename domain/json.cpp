#include "domain/json.hpp"

#include <algorithm>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <stdexcept>
#include <vector>

namespace mg::json {

std::optional<document> parse(std::string_view text, std::string* error) {
  // RapidJSON takes a NUL byte for the end of the input, so "{}\0junk"
  // would pass; a raw NUL is never valid JSON.
  if (auto nul = text.find('\0'); nul != std::string_view::npos) {
    if (error)
      *error = "NUL byte at offset " + std::to_string(nul);
    return std::nullopt;
  }
  document d;
  d.Parse(text.data(), text.size());
  if (d.HasParseError()) {
    if (error)
      *error = std::string(rapidjson::GetParseError_En(d.GetParseError())) + " at offset " +
               std::to_string(d.GetErrorOffset());
    return std::nullopt;
  }
  return d;
}

document parse_trusted(std::string_view text, const char* what) {
  std::string err;
  auto d = parse(text, &err);
  if (!d)
    throw std::runtime_error(std::string("invalid JSON in ") + what + ": " + err);
  return std::move(*d);
}

std::string dump(const value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

namespace {

void write_canonical(const value& v, rapidjson::Writer<rapidjson::StringBuffer>& w) {
  if (v.IsObject()) {
    std::vector<const value::Member*> members;
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it)
      members.push_back(&*it);
    std::sort(members.begin(), members.end(), [](auto* a, auto* b) {
      return std::string_view(a->name.GetString(), a->name.GetStringLength()) <
             std::string_view(b->name.GetString(), b->name.GetStringLength());
    });
    w.StartObject();
    for (auto* m : members) {
      w.Key(m->name.GetString(), m->name.GetStringLength());
      write_canonical(m->value, w);
    }
    w.EndObject();
  } else if (v.IsArray()) {
    w.StartArray();
    for (auto& e : v.GetArray())
      write_canonical(e, w);
    w.EndArray();
  } else {
    v.Accept(w);
  }
}

} // namespace

std::string canonical(const value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  write_canonical(v, w);
  return std::string(buf.GetString(), buf.GetSize());
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
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return std::string(buf.GetString(), buf.GetSize());
}

} // namespace mg::json
