#pragma once
// A test process that hangs is killed by CTest's timeout with nothing to
// show why. This Boost.Test global fixture waits MG_TEST_HANG_SECONDS
// (default 240, under CTest's 300) and then prints every thread's stack
// (gdb, when installed) and aborts. It also makes the Boost log unbuffered
// so the last lines before a hang are not lost with the process.
#include <condition_variable>
#include <mutex>
#include <thread>

namespace mg::test {

struct hang_watchdog {
  hang_watchdog();
  ~hang_watchdog();
  hang_watchdog(const hang_watchdog&) = delete;

private:
  void watch(int seconds);

  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

} // namespace mg::test
