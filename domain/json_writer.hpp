#pragma once
// Builds JSON text (response and error bodies) through RapidJSON's writer
// instead of string concatenation: every string is escaped, and text that
// echoes input has its ill-formed UTF-8 replaced by U+FFFD, so the result
// is always valid UTF-8 JSON.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace mg::json {

class writer {
public:
  writer();
  ~writer();
  writer(const writer&) = delete;
  writer& operator=(const writer&) = delete;

  writer& begin_object();
  writer& end_object();
  writer& begin_array();
  writer& end_array();
  writer& key(std::string_view name);
  writer& string(std::string_view s);
  writer& number(int64_t n);
  writer& boolean(bool b);
  writer& null();
  /// `json` must be a complete JSON value the program produced itself
  /// (a serialisation from dump(), read() or PostgreSQL).
  writer& raw(std::string_view json);

  /// Shorthand for key(name).string(s) and the like.
  writer& member(std::string_view name, std::string_view s) { return key(name).string(s); }
  writer& member(std::string_view name, const char* s) { return key(name).string(s); }
  writer& member(std::string_view name, int64_t n) { return key(name).number(n); }
  writer& member(std::string_view name, int n) { return key(name).number(n); }
  writer& member(std::string_view name, bool b) { return key(name).boolean(b); }

  /// The text written so far.
  std::string str() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace mg::json
