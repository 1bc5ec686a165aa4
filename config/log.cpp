#include "config/log.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "domain/json.hpp"
#include "domain/json_writer.hpp"

namespace mg::log {

namespace {

std::atomic<int> threshold{static_cast<int>(level::info)};
std::mutex out_mutex;
// Set once at start-up, before threads log; read without a lock after.
std::string runtime_node_json;
thread_local std::string_view current_component = "main";

const char* name_of(level l) {
  switch (l) {
  case level::debug:
    return "debug";
  case level::info:
    return "info";
  case level::warn:
    return "warn";
  default:
    return "error";
  }
}

std::string timestamp() {
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms.count()));
  return buf;
}

} // namespace

value::value(const char* s) : json(mg::json::quote(s)) {}
value::value(const std::string& s) : json(mg::json::quote(s)) {}
value::value(std::string_view s) : json(mg::json::quote(s)) {}
value::value(bool b) : json(b ? "true" : "false") {}
value::value(int i) : json(std::to_string(i)) {}
value::value(long i) : json(std::to_string(i)) {}
value::value(long long i) : json(std::to_string(i)) {}
value::value(unsigned long i) : json(std::to_string(i)) {}
value::value(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", std::isfinite(d) ? d : 0.0);
  json = buf;
}

void set_level(level l) {
  threshold = static_cast<int>(l);
}

void set_runtime_node(std::string_view node) {
  runtime_node_json = mg::json::quote(node);
}

component_scope::component_scope(std::string_view name) : previous_(current_component) {
  current_component = name;
}

component_scope::~component_scope() {
  current_component = previous_;
}

bool parse_level(std::string_view name, level& out) {
  for (auto l : {level::debug, level::info, level::warn, level::error})
    if (name == name_of(l)) {
      out = l;
      return true;
    }
  return false;
}

bool enabled(level l) {
  return static_cast<int>(l) >= threshold.load();
}

void write(level l, std::string_view msg, fields f) {
  if (!enabled(l))
    return;
  mg::json::writer w;
  w.begin_object()
      .member("ts", timestamp())
      .member("level", name_of(l))
      .member("component", current_component);
  if (!runtime_node_json.empty())
    w.key("runtime_node").raw(runtime_node_json);
  w.member("msg", msg);
  for (auto& [key, v] : f)
    w.key(key).raw(v.json);
  const std::string line = w.end_object().str() + "\n";
  std::lock_guard<std::mutex> lock(out_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

} // namespace mg::log
