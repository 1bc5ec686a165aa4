#include "actors/cluster/remote_providers.hpp"

#include <atomic>
#include <cctype>
#include <chrono>
#include <map>
#include <mutex>
#include <set>

#include "config/log.hpp"
#include "domain/json_writer.hpp"
#include "domain/provider_json.hpp"

namespace mg::actors {

namespace {

using namespace std::chrono;

/// Where one key's calls go. Bound and unbound as siblings come and go;
/// the object itself lives as long as the table, so a pointer a worker
/// took stays valid (its calls then throw).
class endpoint {
public:
  endpoint(provider_kind kind, std::string key) : kind_(kind), key_(std::move(key)) {}

  bool bound() const {
    std::lock_guard<std::mutex> g(mu_);
    return static_cast<bool>(target_);
  }

  /// Returns 0 when another live actor holds the key, else the
  /// registration's id (the same one when `who` holds it already).
  uint64_t bind(caf::actor_system& sys, const caf::actor& who, uint64_t id, milliseconds timeout) {
    std::lock_guard<std::mutex> g(mu_);
    if (target_)
      return target_ == who ? registration_ : 0;
    sys_ = &sys;
    target_ = who;
    registration_ = id;
    timeout_ = timeout;
    return id;
  }

  /// Only the registration that bound it may unbind it (a late exit functor of
  /// an earlier registration must not remove a newer one).
  bool unbind(uint64_t id) {
    std::lock_guard<std::mutex> g(mu_);
    if (registration_ != id || !target_)
      return false;
    target_ = nullptr;
    return true;
  }

  template <class... Ts> std::string call(const char* op, Ts&&... xs) const {
    caf::actor target;
    caf::actor_system* sys = nullptr;
    milliseconds timeout{};
    {
      std::lock_guard<std::mutex> g(mu_);
      target = target_;
      sys = sys_;
      timeout = timeout_;
    }
    auto what = std::string("remote ") +
                (kind_ == provider_kind::executor ? "executor" : "signer") + " '" + key_ + "' " +
                op;
    if (!target)
      throw domain::executor_error(what + ": no longer registered");
    // A fresh hidden scoped actor per call: a late answer to a timed-out
    // call lands in a mailbox that no longer exists.
    caf::scoped_actor self{*sys, true};
    std::string out, failure;
    self->request(target, timeout, std::forward<Ts>(xs)...)
        .receive([&](std::string& s) { out = std::move(s); },
                 [&](caf::error& e) {
                   if (e == caf::sec::request_timeout)
                     failure = "no answer within " + std::to_string(timeout.count()) + " ms";
                   else if (e == caf::sec::request_receiver_down)
                     failure = "provider is gone";
                   else if (e.category() == cluster_error_category &&
                            e.context().match_elements<int32_t, std::string>())
                     failure = e.context().get_as<std::string>(1);
                   else
                     failure = sys->render(e);
                 });
    if (!failure.empty())
      throw domain::executor_error(what + ": " + failure);
    return out;
  }

private:
  provider_kind kind_;
  std::string key_;
  mutable std::mutex mu_;
  caf::actor_system* sys_ = nullptr;
  caf::actor target_;
  uint64_t registration_ = 0;
  milliseconds timeout_{30000};
};

class remote_executor final : public domain::executor {
public:
  explicit remote_executor(std::string key) : ep(provider_kind::executor, std::move(key)) {}
  std::optional<domain::step_result> preflight(const domain::execution_context& ctx) override {
    return domain::optional_step_result_from_json(
        ep.call("preflight", preflight_atom::value, domain::to_json(ctx)));
  }
  std::optional<domain::prepared_action> prepare(const domain::execution_context& ctx) override {
    return domain::optional_prepared_action_from_json(
        ep.call("prepare", prepare_atom::value, domain::to_json(ctx)));
  }
  domain::step_result submit(const domain::execution_context& ctx,
                             const domain::prepared_action& action,
                             const domain::sign_result* signature) override {
    return domain::step_result_from_json(ep.call("submit", submit_atom::value, domain::to_json(ctx),
                                                 domain::to_json(action),
                                                 domain::to_json(signature)));
  }
  domain::step_result observe(const domain::execution_context& ctx) override {
    return domain::step_result_from_json(
        ep.call("observe", observe_atom::value, domain::to_json(ctx)));
  }
  domain::recover_result recover(const domain::execution_context& ctx) override {
    return domain::recover_result_from_json(
        ep.call("recover", recover_atom::value, domain::to_json(ctx)));
  }
  domain::health_result health() override {
    return domain::health_result_from_json(ep.call("health", health_atom::value));
  }
  void abandon(const domain::execution_context& ctx,
               const domain::prepared_action& action) override {
    ep.call("abandon", abandon_atom::value, domain::to_json(ctx), domain::to_json(action));
  }
  endpoint ep;
};

class remote_signer final : public domain::signer {
public:
  explicit remote_signer(std::string key) : ep(provider_kind::signer, std::move(key)) {}
  domain::sign_result sign(const domain::sign_request& req) override {
    return domain::sign_result_from_json(ep.call("sign", sign_atom::value, domain::to_json(req)));
  }
  domain::health_result health() override {
    return domain::health_result_from_json(ep.call("health", health_atom::value));
  }
  endpoint ep;
};

class remote_provider_table final : public domain::provider_source {
public:
  domain::executor* find_executor(const std::string& key) const override {
    std::lock_guard<std::mutex> g(mu_);
    auto it = executors_.find(key);
    return it != executors_.end() && it->second->ep.bound() ? it->second.get() : nullptr;
  }
  domain::signer* find_signer(const std::string& key) const override {
    std::lock_guard<std::mutex> g(mu_);
    auto it = signers_.find(key);
    return it != signers_.end() && it->second->ep.bound() ? it->second.get() : nullptr;
  }

  std::vector<std::pair<std::string, domain::executor*>> current_executors() const override {
    return bound_of<domain::executor>(executors_);
  }
  std::vector<std::pair<std::string, domain::signer*>> current_signers() const override {
    return bound_of<domain::signer>(signers_);
  }

  void configure(const domain::provider_registry& local, double timeout_seconds) {
    std::lock_guard<std::mutex> g(mu_);
    for (auto& [k, _] : local.executors)
      local_executors_.insert(k);
    for (auto& [k, _] : local.signers)
      local_signers_.insert(k);
    timeout_ = milliseconds(static_cast<long long>(timeout_seconds * 1000));
  }

  bool is_local(provider_kind kind, const std::string& key) const {
    std::lock_guard<std::mutex> g(mu_);
    return (kind == provider_kind::executor ? local_executors_ : local_signers_).count(key) > 0;
  }

  /// The key's endpoint, made on first use and never erased.
  endpoint& slot(provider_kind kind, const std::string& key) {
    std::lock_guard<std::mutex> g(mu_);
    if (kind == provider_kind::executor) {
      auto& p = executors_[key];
      if (!p)
        p = std::make_shared<remote_executor>(key);
      return p->ep;
    }
    auto& p = signers_[key];
    if (!p)
      p = std::make_shared<remote_signer>(key);
    return p->ep;
  }

  milliseconds timeout() const {
    std::lock_guard<std::mutex> g(mu_);
    return timeout_;
  }

private:
  /// The keys whose endpoint has a live actor now.
  template <class Base, class Remote>
  std::vector<std::pair<std::string, Base*>>
  bound_of(const std::map<std::string, std::shared_ptr<Remote>>& m) const {
    std::lock_guard<std::mutex> g(mu_);
    std::vector<std::pair<std::string, Base*>> out;
    for (auto& [key, p] : m)
      if (p->ep.bound())
        out.emplace_back(key, p.get());
    return out;
  }

  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<remote_executor>> executors_;
  std::map<std::string, std::shared_ptr<remote_signer>> signers_;
  std::set<std::string> local_executors_, local_signers_;
  milliseconds timeout_{30000};
};

std::shared_ptr<remote_provider_table> table() {
  static auto t = std::make_shared<remote_provider_table>();
  return t;
}

std::atomic<uint64_t> next_registration{1};

/// Unbinds one registration when its provider or the session that made it
/// terminates. A proxy of a remote actor terminates when that actor does or
/// when its node disconnects, so this covers a dead sibling too. Attached
/// functors run on the dying actor's exit (at once if it is already gone),
/// need no watcher actor, and hold no reference that keeps either alive.
void unbind_when_gone(const caf::actor& who, endpoint* ep, uint64_t id, const std::string& key) {
  who->attach_functor([ep, id, key](const caf::error& reason) {
    if (ep->unbind(id))
      log::info("remote provider unregistered", {{"key", key}, {"reason", caf::to_string(reason)}});
  });
}

bool valid_key(const std::string& key) {
  if (key.empty() || key.size() > 64)
    return false;
  for (char c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      return false;
  return true;
}

} // namespace

std::shared_ptr<const domain::provider_source>
remote_providers(const domain::provider_registry& local, double timeout_seconds) {
  auto t = table();
  t->configure(local, timeout_seconds);
  return t;
}

std::tuple<int32_t, std::string>
register_remote_provider(caf::actor_system& sys, const api::caller& who, provider_kind kind,
                         const std::string& key, const caf::actor& provider,
                         const caf::actor& session) {
  log::component_scope component("cluster");
  const char* kind_name = kind == provider_kind::executor ? "executor" : "signer";
  auto refuse = [&](const api::error& e) -> std::tuple<int32_t, std::string> {
    log::warn("remote provider refused",
              {{"key_id", who.key_id}, {"key", key}, {"kind", kind_name}, {"reason", e.message}});
    auto r = api::error_reply(e);
    return {static_cast<int32_t>(r.status), r.body};
  };
  // Routing money through another process is an operator decision.
  if (!who.has(api::scope::admin))
    return refuse(api::forbidden("key lacks scope 'admin'"));
  if (!valid_key(key))
    return refuse(api::bad_request("key must be 1-64 characters of [A-Za-z0-9_.-]"));
  if (!provider)
    return refuse(api::bad_request("no provider actor given"));
  auto t = table();
  if (t->is_local(kind, key))
    return refuse(api::conflict(std::string("a local ") + kind_name + " has key '" + key + "'"));
  auto& ep = t->slot(kind, key);
  uint64_t id = next_registration++;
  uint64_t got = ep.bind(sys, provider, id, t->timeout());
  if (got == 0)
    return refuse(
        api::conflict(std::string("another live actor holds ") + kind_name + " '" + key + "'"));
  if (got == id) { // a fresh registration (a repeated one is watched already)
    unbind_when_gone(provider, &ep, id, key);
    unbind_when_gone(session, &ep, id, key);
  }
  log::info("remote provider registered",
            {{"key_id", who.key_id}, {"key", key}, {"kind", kind_name}});
  return {200, json::writer()
                   .begin_object()
                   .member("registered", key)
                   .member("kind", kind_name)
                   .end_object()
                   .str()};
}

} // namespace mg::actors
