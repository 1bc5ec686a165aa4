#pragma once
// The fixture's real sim executor with hooks that run inside the engine's
// calls to it: to look at the database, or to unwind, at that moment.
#include <functional>
#include <memory>

#include "domain/executor.hpp"

namespace mg::test {

struct hooked_sim : domain::executor {
  std::shared_ptr<domain::executor> sim;
  /// When a batch's submits begin (submit_many, or submit for a batch of
  /// one): after the claim committed, before any ledger write.
  std::function<void()> before_submits = [] {
  };
  /// Before each preflight call (it may throw, as a failed call would).
  std::function<void(const domain::execution_context&)> before_preflight =
      [](const domain::execution_context&) {
      };
  /// Before each observe and recover call.
  std::function<void()> before_observe = [] {
  };
  std::function<void()> before_recover = [] {
  };

  explicit hooked_sim(std::shared_ptr<domain::executor> s) : sim(std::move(s)) {}
  std::optional<domain::step_result> preflight(const domain::execution_context& c) override {
    before_preflight(c);
    return sim->preflight(c);
  }
  std::optional<domain::prepared_action> prepare(const domain::execution_context& c) override {
    return sim->prepare(c);
  }
  domain::step_result submit(const domain::execution_context& c, const domain::prepared_action& a,
                             const domain::sign_result* s) override {
    before_submits(); // a batch of one
    return sim->submit(c, a, s);
  }
  std::vector<domain::step_result>
  submit_many(const std::vector<domain::submit_call>& calls) override {
    before_submits();
    return sim->submit_many(calls);
  }
  domain::step_result observe(const domain::execution_context& c) override {
    before_observe();
    return sim->observe(c);
  }
  domain::recover_result recover(const domain::execution_context& c) override {
    before_recover();
    return sim->recover(c);
  }
  domain::health_result health() override { return sim->health(); }
  bool claims_in_batch(const domain::execution_context& c) const override {
    return sim->claims_in_batch(c);
  }
};

/// Puts a hooked_sim in place of `providers`' "sim" executor.
inline std::shared_ptr<hooked_sim> hook_sim(domain::provider_registry& providers) {
  auto hooked = std::make_shared<hooked_sim>(providers.executors.at("sim"));
  providers.executors["sim"] = hooked;
  return hooked;
}

} // namespace mg::test
