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

/// Adds "runtime_node" to every line from now on (the process's MG_RUNTIME_NODE).
void set_runtime_node(std::string_view node);

/// Names the component (a worker, "api", "admin") the calling thread works
/// for while the scope lives; every line it writes carries "component".
class component_scope {
public:
  explicit component_scope(std::string_view name);
  ~component_scope();
  component_scope(const component_scope&) = delete;
  component_scope& operator=(const component_scope&) = delete;

private:
  std::string_view previous_;
};
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
