// The /proc readers of the restart-under-own-name check: a process's command
// (field 2 of /proc/<pid>/stat) is chosen by whoever started it, so any
// bytes may stand there. parse_proc_stat must never crash, and for a line
// built around an arbitrary command it must find the state and start time
// that follow it; parse_id_file gives "" or 1-64 hex digits and dashes.
#include <string>

#include "domain/process_identity.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mg;

namespace {

bool id_chars_only(const std::string& s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '-'))
      return false;
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto in = fuzz::bytes(data, size);

  if (auto raw = domain::parse_proc_stat(in))
    MG_FUZZ_CHECK(raw->state != '\0' || in.find('\0') != std::string_view::npos, "state byte");

  auto id = domain::parse_id_file(in);
  MG_FUZZ_CHECK(id.empty() ||
                    (id.size() <= 64 && id_chars_only(id) && in.find(id) != std::string_view::npos),
                "id file contents");

  // Fields 3..21 after the command, then the start time (field 22).
  std::string line = "4242 (" + std::string(in) + ") Z";
  for (int field = 4; field <= 21; ++field)
    line += " " + std::to_string(field);
  const std::uint64_t start = size * 7919u + 1;
  line += " " + std::to_string(start) + " 0 0\n";
  auto built = domain::parse_proc_stat(line);
  MG_FUZZ_CHECK(built.has_value(), "a well-formed line around any command parses");
  MG_FUZZ_CHECK(built->state == 'Z' && built->start_time == start, "fields after the last ')'");
  return 0;
}
