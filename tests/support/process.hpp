#pragma once
// Child processes of the movegate binary for end-to-end tests.
#include <chrono>
#include <map>
#include <string>
#include <sys/types.h>
#include <vector>

namespace mg::test {

/// Path of the movegate binary of this build.
std::string movegate_binary();

class child {
public:
  /// Starts `movegate args...` with the current environment plus `env` (the
  /// HTTP, admin and cluster listeners on free ports unless `env` names them);
  /// stdout and stderr go to `log_path`.
  child(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
        const std::string& log_path);
  /// As above for another program of this build (e.g. an example sibling).
  child(const std::string& program, const std::vector<std::string>& args,
        const std::map<std::string, std::string>& env, const std::string& log_path);
  ~child();
  child(const child&) = delete;

  void signal(int sig);
  /// SIGSTOP, then waits until every thread of the process is stopped
  /// (kill returns before a thread running on another core has stopped);
  /// false when that did not happen within `timeout`.
  bool freeze(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  /// Exit code (128 + signal when killed), or -1 after `timeout`.
  int wait(std::chrono::milliseconds timeout);
  bool running();
  pid_t pid() const { return pid_; }
  std::string log() const;

private:
  pid_t pid_ = -1;
  int status_ = -1;
  std::string log_path_;
};

} // namespace mg::test
