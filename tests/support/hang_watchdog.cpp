#include "tests/support/hang_watchdog.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <sys/prctl.h>
#include <unistd.h>

namespace mg::test {

namespace {

int hang_seconds() {
  const char* v = std::getenv("MG_TEST_HANG_SECONDS");
  int s = v ? std::atoi(v) : 0;
  return s > 0 ? s : 240;
}

void print_stacks() {
  // Under Yama's ptrace_scope=1 only an ancestor may attach: allow gdb.
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  auto cmd = "command -v gdb >/dev/null && gdb -p " + std::to_string(getpid()) +
             " -batch -nx -ex 'set pagination off' -ex 'thread apply all bt' 1>&2";
  if (std::system(cmd.c_str()) != 0)
    std::fputs("hang watchdog: no stacks (gdb missing or could not attach)\n", stderr);
}

} // namespace

hang_watchdog::hang_watchdog() {
  std::cout.setf(std::ios::unitbuf);
  thread_ = std::thread([this, s = hang_seconds()] { watch(s); });
}

hang_watchdog::~hang_watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void hang_watchdog::watch(int seconds) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return done_; }))
    return;
  std::fprintf(stderr,
               "hang watchdog: the test process is still running after %d s; the stack"
               " of every thread follows\n",
               seconds);
  std::fflush(stderr);
  print_stacks();
  std::abort();
}

} // namespace mg::test
