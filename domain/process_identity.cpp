#include "domain/process_identity.hpp"

#include <vector>

namespace mg::domain {

namespace {

bool all_digits(std::string_view s) {
  if (s.empty() || s.size() > 19) // always fits a uint64
    return false;
  for (char c : s)
    if (c < '0' || c > '9')
      return false;
  return true;
}

std::uint64_t to_u64(std::string_view digits) {
  std::uint64_t v = 0;
  for (char c : digits)
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  return v;
}

std::vector<std::string_view> split_spaces(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ')
      ++i;
    size_t start = i;
    while (i < s.size() && s[i] != ' ')
      ++i;
    if (i > start)
      out.push_back(s.substr(start, i - start));
  }
  return out;
}

} // namespace

bool process_identity::complete() const {
  return !machine_id.empty() && !boot_id.empty() && pid_namespace != 0 && pid > 0 &&
         start_time != 0;
}

std::string parse_id_file(std::string_view contents) {
  auto blank = [](char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
  };
  while (!contents.empty() && blank(contents.front()))
    contents.remove_prefix(1);
  while (!contents.empty() && blank(contents.back()))
    contents.remove_suffix(1);
  if (contents.empty() || contents.size() > 64)
    return "";
  for (char c : contents) {
    bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex && c != '-')
      return "";
  }
  return std::string(contents);
}

std::optional<proc_stat> parse_proc_stat(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
    line.remove_suffix(1);
  auto open = line.find(" (");
  auto close = line.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open ||
      !all_digits(line.substr(0, open)))
    return std::nullopt;
  // After the command: field 3 (state) is the first, field 22 the 20th.
  auto fields = split_spaces(line.substr(close + 1));
  constexpr size_t state_index = 0, start_time_index = 22 - 3;
  if (fields.size() <= start_time_index || fields[state_index].size() != 1 ||
      !all_digits(fields[start_time_index]))
    return std::nullopt;
  return proc_stat{fields[state_index][0], to_u64(fields[start_time_index])};
}

holder_verdict judge_holder(const process_identity& me, const process_identity& holder,
                            const pid_look& look) {
  using k = holder_verdict::kind;
  if (!me.complete())
    return {k::unproven, "this process cannot read its own identity"};
  if (!holder.complete())
    return {k::unproven, "the holder recorded no process identity"};
  if (holder.machine_id != me.machine_id)
    return {k::unproven, "the holder runs on another machine"};
  if (holder.boot_id != me.boot_id)
    return {k::unproven, "the holder ran under another boot id"};
  if (holder.pid_namespace != me.pid_namespace)
    return {k::unproven, "the holder runs in another pid namespace"};
  const std::string pid = "pid " + std::to_string(holder.pid);
  switch (look.found) {
  case pid_look::kind::no_process:
    return {k::dead, "no process with " + pid};
  case pid_look::kind::unknown:
    return {k::unproven, "cannot look up " + pid};
  case pid_look::kind::process:
    break;
  }
  if (look.stat.start_time != holder.start_time)
    return {k::dead, pid + " now belongs to another process"};
  // Exited but not yet reaped by its parent: it holds nothing any more.
  if (look.stat.state == 'Z' || look.stat.state == 'X')
    return {k::dead, pid + " has exited"};
  return {k::alive, pid + " is running"};
}

} // namespace mg::domain
