#include "tests/support/runtime_fixture.hpp"

namespace mg::test {

runtime_fixture::runtime_fixture() {
  cfg = std::make_unique<caf::actor_system_config>();
  actors::configure(*cfg);
  sys = std::make_unique<caf::actor_system>(*cfg);
  self = std::make_unique<caf::scoped_actor>(*sys);
}

runtime_fixture::~runtime_fixture() {
  if (rt && !stopped)
    stop();
  self.reset();
  rt.reset();
  sys.reset();
}

void runtime_fixture::start(std::vector<actors::worker_spec> extra) {
  auto providers = executors::builtin_providers(url);
  if (adjust_providers)
    adjust_providers(providers);
  rt = std::make_unique<actors::runtime>(*sys, settings, std::move(providers));
  rt->start(caf::actor_cast<caf::actor>(*self), std::move(extra));
}

int runtime_fixture::wait_exit(std::chrono::seconds timeout) {
  int code = -1;
  (*self)->receive([&](actors::done_atom, int c) { code = c; }, caf::after(timeout) >> [] {});
  if (code >= 0)
    stopped = true;
  return code;
}

int runtime_fixture::stop(std::chrono::seconds timeout) {
  if (stopped)
    return 0;
  rt->shutdown();
  return wait_exit(timeout);
}

std::string runtime_fixture::approve_and_notify(const std::string& template_key) {
  auto id = create_and_approve(template_key);
  rt->notify_changed(id);
  return id;
}

bool runtime_fixture::eventually(const std::function<bool()>& pred,
                                 std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

} // namespace mg::test
