#pragma once
// A real actor system and runtime on the test's own database.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>

#include "actors/runtime.hpp"
#include "actors/system_config.hpp"
#include "tests/support/db_fixture.hpp"

namespace mg::test {

struct runtime_fixture : db_fixture {
  runtime_fixture();
  ~runtime_fixture();

  /// Starts the runtime with the current `settings` (and extra workers).
  void start(std::vector<actors::worker_spec> extra = {});
  /// Asks it to stop; returns its exit code (-1 when it did not report).
  int stop(std::chrono::seconds timeout = std::chrono::seconds(20));
  /// Waits for the runtime's own verdict (core failure) without asking.
  int wait_exit(std::chrono::seconds timeout);
  /// As the API will: approve in the database, then tell the runtime.
  std::string approve_and_notify(const std::string& template_key);
  /// Polls `pred` every 10 ms until true or `timeout`; returns its last value.
  bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds timeout);

  /// Applied to the built-in providers before start (a hooked sim, say).
  std::function<void(domain::provider_registry&)> adjust_providers;

  std::unique_ptr<caf::actor_system_config> cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<caf::scoped_actor> self;
  std::unique_ptr<actors::runtime> rt;
  bool stopped = false;
};

} // namespace mg::test
