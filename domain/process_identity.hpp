#pragma once
// Who holds a runtime name (SPEC §8 "Restart under its own name"): enough
// to tell, from another process on the same host, whether the holder still
// runs. Pids are reused and containers share machine and boot ids, so a
// holder is proven dead only when machine, boot and pid namespace match and
// no process with its pid *and* start time exists.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mg::domain {

struct process_identity {
  std::string machine_id;          // /etc/machine-id
  std::string boot_id;             // /proc/sys/kernel/random/boot_id
  std::uint64_t pid_namespace = 0; // inode of /proc/self/ns/pid
  std::int64_t pid = 0;
  std::uint64_t start_time = 0; // clock ticks after boot (/proc/<pid>/stat field 22)

  /// Every part known: only then can it prove anything.
  bool complete() const;
};

/// The contents of a machine-id or boot_id file without surrounding
/// whitespace; "" unless it is 1–64 hex digits and dashes.
std::string parse_id_file(std::string_view contents);

/// What /proc/<pid>/stat says about a process.
struct proc_stat {
  char state = '?';             // field 3: R, S, D, Z (zombie), X (dead), …
  std::uint64_t start_time = 0; // field 22
};

/// Parses one /proc/<pid>/stat line. The command (field 2) is in
/// parentheses and may itself hold spaces and parentheses, so the fields
/// are counted from the last ')'. nullopt for anything malformed.
std::optional<proc_stat> parse_proc_stat(std::string_view line);

/// What looking up a pid in this process's /proc found.
struct pid_look {
  enum class kind { no_process, process, unknown } found = kind::unknown;
  proc_stat stat; // when found == process
};

/// Whether this process may take `holder`'s live lease.
struct holder_verdict {
  enum class kind {
    dead,    // take the name over at once
    alive,   // another process runs under the name: refuse to start
    unproven // another host, boot or container, or no identity: wait for the lease
  } verdict = kind::unproven;
  std::string reason; // for the logs
};

/// `look` is `holder.pid` looked up in this process's /proc (it is only
/// meaningful when machine, boot and namespace match).
holder_verdict judge_holder(const process_identity& me, const process_identity& holder,
                            const pid_look& look);

} // namespace mg::domain
