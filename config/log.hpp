#pragma once
// Structured logs: one JSON object per line on stderr. Callers never pass
// secrets (the database URL, tokens, keys) as fields.
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace mg::log {

enum class level { debug = 0, info = 1, warn = 2, error = 3 };

/// A field value already rendered as JSON.
struct value {
  std::string json;
  value(const char* s);
  value(const std::string& s);
  value(std::string_view s);
  value(bool b);
  value(int i);
  value(long i);
  value(long long i);
  value(unsigned long i);
  value(double d);
};

using fields = std::initializer_list<std::pair<const char*, value>>;

void set_level(level l);
bool parse_level(std::string_view name, level& out);
bool enabled(level l);

void write(level l, std::string_view msg, fields f = {});
inline void debug(std::string_view msg, fields f = {}) {
  write(level::debug, msg, f);
}
inline void info(std::string_view msg, fields f = {}) {
  write(level::info, msg, f);
}
inline void warn(std::string_view msg, fields f = {}) {
  write(level::warn, msg, f);
}
inline void error(std::string_view msg, fields f = {}) {
  write(level::error, msg, f);
}

} // namespace mg::log
