#include "actors/proc_identity.hpp"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <limits>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace mg::actors {

namespace {

/// A small /proc or /etc file; nullopt with errno set when it cannot be
/// read (ENOENT or ESRCH: the process is gone).
std::optional<std::string> read_small_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  std::string text;
  char buf[4096];
  constexpr size_t max_size = 64 * 1024;
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int saved = errno;
      ::close(fd);
      errno = saved;
      return std::nullopt;
    }
    if (n == 0 || text.size() + static_cast<size_t>(n) > max_size)
      break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

/// /proc may hide processes (hidepid, systemd's ProtectProc=invisible):
/// only the kernel's own answer proves that none has this pid.
bool no_such_process(std::int64_t pid) {
  if (pid > std::numeric_limits<pid_t>::max())
    return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

std::string read_id(const char* path) {
  auto text = read_small_file(path);
  return text ? domain::parse_id_file(*text) : std::string();
}

} // namespace

domain::process_identity this_process_identity() {
  domain::process_identity me;
  me.machine_id = read_id("/etc/machine-id");
  if (me.machine_id.empty())
    me.machine_id = read_id("/var/lib/dbus/machine-id");
  me.boot_id = read_id("/proc/sys/kernel/random/boot_id");
  struct stat ns {};
  if (stat("/proc/self/ns/pid", &ns) == 0)
    me.pid_namespace = static_cast<std::uint64_t>(ns.st_ino);
  me.pid = static_cast<std::int64_t>(getpid());
  auto look = look_up_pid(me.pid);
  if (look.found == domain::pid_look::kind::process)
    me.start_time = look.stat.start_time;
  return me;
}

domain::pid_look look_up_pid(std::int64_t pid) {
  domain::pid_look out;
  if (pid <= 0)
    return out;
  auto text = read_small_file("/proc/" + std::to_string(pid) + "/stat");
  if (!text) {
    if (errno == ENOENT || errno == ESRCH)
      out.found = no_such_process(pid) ? domain::pid_look::kind::no_process
                                       : domain::pid_look::kind::unknown;
    return out;
  }
  auto stat = domain::parse_proc_stat(*text);
  if (stat) {
    out.found = domain::pid_look::kind::process;
    out.stat = *stat;
  }
  return out;
}

} // namespace mg::actors
