#include "tests/support/process.hpp"
#include "build_paths.hpp"

#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace mg::test {

std::string movegate_binary() {
  return MG_BINARY_DIR "/movegate";
}

child::child(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
             const std::string& log_path)
    : child(movegate_binary(), args, env, log_path) {}

child::child(const std::string& program, const std::vector<std::string>& args,
             const std::map<std::string, std::string>& env, const std::string& log_path)
    : log_path_(log_path) {
  // Truncated before fork: log() must never show a previous run's file
  // (the same path is reused by the next run of the test).
  int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    throw std::runtime_error("cannot open " + log_path);
  pid_ = fork();
  if (pid_ < 0) {
    close(fd);
    throw std::runtime_error("fork failed");
  }
  if (pid_ > 0) {
    close(fd);
    return;
  }
  dup2(fd, 1);
  dup2(fd, 2);
  // Listeners on free ports unless the test chose them, so children of
  // parallel tests (or a service already on 8080) never collide.
  setenv("MG_HTTP_ADDR", "127.0.0.1:0", 1);
  setenv("MG_ADMIN_ADDR", "127.0.0.1:0", 1);
  setenv("MG_CLUSTER_ADDR", "127.0.0.1:0", 1); // never the shared default 4242
  for (auto& [k, v] : env)
    setenv(k.c_str(), v.c_str(), 1);
  std::vector<std::string> argv_s{program};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  _exit(127);
}

child::~child() {
  if (running()) {
    signal(SIGKILL);
    wait(std::chrono::seconds(5));
  }
}

void child::signal(int sig) {
  if (pid_ > 0)
    ::kill(pid_, sig);
}

namespace {

/// Every thread of `pid` is in a stopped state ('T' or 't' in its stat).
bool all_threads_stopped(pid_t pid) {
  const std::string task_dir = "/proc/" + std::to_string(pid) + "/task";
  bool any = false;
  for (auto& entry : std::filesystem::directory_iterator(task_dir)) {
    std::ifstream in(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto after_name = stat.rfind(')');
    if (after_name == std::string::npos || after_name + 2 >= stat.size())
      return false;
    char state = stat[after_name + 2];
    if (state != 'T' && state != 't')
      return false;
    any = true;
  }
  return any;
}

} // namespace

bool child::freeze(std::chrono::milliseconds timeout) {
  signal(SIGSTOP);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      if (all_threads_stopped(pid_))
        return true;
    } catch (const std::filesystem::filesystem_error&) {
      // a thread ended while we listed them: look again
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

bool child::running() {
  if (status_ >= 0 || pid_ <= 0)
    return false;
  int st = 0;
  if (waitpid(pid_, &st, WNOHANG) == pid_) {
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return false;
  }
  return true;
}

int child::wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() > deadline)
      return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return status_;
}

std::string child::log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace mg::test
