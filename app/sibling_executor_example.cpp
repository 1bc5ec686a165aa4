// movegate-sibling-executor: an example sibling service that offers an
// executor as a remote actor (SPEC §8). It logs in to a `movegate serve`'s
// cluster door with a key of scope admin, registers an executor under
// --executor-key and serves movegate's calls until SIGTERM or SIGINT
// (exit 0). Until it is registered, and again whenever the session ends
// (movegate restarted, the connection dropped), it connects, logs in and
// registers, backing off from 250 ms to 5 s between tries; a refusal that
// cannot change (400, 403) exits 1. Its executor is a toy ledger in
// memory: submit accepts each idempotency key once, observe completes what
// was submitted, recover finds what was submitted and fences the rest.
// Every call is printed.
//
//   movegate-sibling-executor --cluster 127.0.0.1:4242 --keys keys.json
//       --key ops-admin --executor-key remote_sim
//       [--tls-cert PEM --tls-key PEM --tls-ca PEM]
//
// movegate forgets the registration when this process (or its
// connection) goes; nodes it was running then go to recovery. A login
// refused for a rate limit or the per-key session cap (429) is retried
// with the same backoff. The registration travels with the session token
// (movegate_client): a build against an older movegate_client gets 401.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "actors/cluster/movement_client.hpp"
#include "actors/cluster/provider_actor.hpp"
#include "domain/api_auth.hpp"
#include "domain/hash.hpp"
#include "domain/url.hpp"

using namespace std::chrono;

namespace {

int usage() {
  std::cerr << "usage: movegate-sibling-executor --cluster HOST:PORT --keys FILE --key KEY_ID"
               " --executor-key KEY [--tls-cert PEM --tls-key PEM --tls-ca PEM]\n";
  return 2;
}

void say(const std::string& line) {
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  std::cout << line << std::endl;
}

/// Accepts each idempotency key once; what it accepted completes at the
/// first observe.
class toy_ledger_executor : public mg::domain::executor {
public:
  std::optional<mg::domain::step_result>
  preflight(const mg::domain::execution_context& ctx) override {
    say("preflight " + ctx.idempotency_key);
    return std::nullopt;
  }

  std::optional<mg::domain::prepared_action>
  prepare(const mg::domain::execution_context& ctx) override {
    mg::domain::prepared_action a;
    a.action_type = ctx.action_type;
    a.payload = ctx.intent;
    a.payload_hash = mg::domain::sha256_hex(a.payload);
    return a;
  }

  mg::domain::step_result submit(const mg::domain::execution_context& ctx,
                                 const mg::domain::prepared_action&,
                                 const mg::domain::sign_result*) override {
    say("submit " + ctx.idempotency_key);
    std::lock_guard<std::mutex> lock(mutex_);
    if (fenced_.count(ctx.idempotency_key))
      throw mg::domain::executor_error("idempotency key " + ctx.idempotency_key + " was fenced");
    accepted_.insert(ctx.idempotency_key);
    return submitted(ctx);
  }

  mg::domain::step_result observe(const mg::domain::execution_context& ctx) override {
    say("observe " + ctx.idempotency_key);
    mg::domain::step_result r;
    r.next_state = mg::domain::node_state::completed;
    return r;
  }

  mg::domain::recover_result recover(const mg::domain::execution_context& ctx) override {
    say("recover " + ctx.idempotency_key);
    std::lock_guard<std::mutex> lock(mutex_);
    mg::domain::recover_result r;
    if (accepted_.count(ctx.idempotency_key)) {
      r.outcome = mg::domain::recover_outcome::found;
      r.result = submitted(ctx);
    } else {
      fenced_.insert(ctx.idempotency_key);
      r.outcome = mg::domain::recover_outcome::fenced;
    }
    return r;
  }

  mg::domain::health_result health() override { return {}; }

private:
  static mg::domain::step_result submitted(const mg::domain::execution_context& ctx) {
    mg::domain::step_result r;
    r.next_state = mg::domain::node_state::submitted;
    r.provider_ref_id = "toy-" + ctx.idempotency_key;
    r.retry_after_seconds = 0.0;
    return r;
  }

  std::mutex mutex_;
  std::set<std::string> accepted_;
  std::set<std::string> fenced_;
};

/// A registration movegate refused for good (bad key name, missing scope).
struct refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Connects, logs in and registers `provider` under `executor_key`. Throws
/// refused for a 4xx that trying again cannot change, client_error for the
/// rest (nothing listening yet, a 409 while movegate still holds the key
/// of a session that just dropped).
void offer(mg::cluster::movement_client& client, const mg::domain::host_port& where,
           const std::string& key_id, const std::string& secret, const std::string& executor_key,
           const mg::actors::remote_executor_actor& provider) {
  client.connect(where.host, static_cast<uint16_t>(where.port));
  client.login(key_id, secret);
  auto r = client.register_executor(executor_key, provider);
  if (r.status == 200)
    return;
  auto what = "register answered " + std::to_string(r.status) + ": " + r.body;
  if (r.status == 409)
    throw mg::cluster::client_error(what);
  throw refused(what);
}

/// Waits up to `timeout` for SIGTERM/SIGINT; the signal, or 0.
int stop_signal(const sigset_t& signals, milliseconds timeout) {
  auto s = duration_cast<seconds>(timeout);
  timespec wait{static_cast<time_t>(s.count()),
                static_cast<long>(duration_cast<nanoseconds>(timeout - s).count())};
  int sig = sigtimedwait(&signals, nullptr, &wait);
  return sig > 0 ? sig : 0;
}

constexpr milliseconds first_backoff{250};
constexpr milliseconds last_backoff{5000};

std::string secret_of(const std::string& path, const std::string& key_id) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  for (auto& k : mg::api::parse_api_keys(text.str()))
    if (k.key_id == key_id)
      return k.secret;
  throw std::runtime_error("--key " + key_id + " is not in " + path);
}

} // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  for (int i = 1; i + 1 < argc; i += 2)
    flags[argv[i]] = argv[i + 1];
  if (argc % 2 == 0)
    return usage();
  for (auto f : {"--cluster", "--keys", "--key", "--executor-key"})
    if (flags[f].empty())
      return usage();
  std::optional<mg::cluster::tls_files> tls;
  if (flags.count("--tls-cert") || flags.count("--tls-key") || flags.count("--tls-ca")) {
    if (!flags.count("--tls-cert") || !flags.count("--tls-key") || !flags.count("--tls-ca"))
      return usage();
    tls = mg::cluster::tls_files{flags["--tls-cert"], flags["--tls-key"], flags["--tls-ca"]};
  }
  // Blocked before CAF starts its threads (they inherit the mask), so only
  // stop_signal() sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  try {
    auto where = mg::domain::parse_host_port(flags["--cluster"]);
    auto secret = secret_of(flags["--keys"], flags["--key"]);
    caf::actor_system_config cfg;
    mg::cluster::configure(cfg, tls);
    caf::actor_system sys{cfg};
    auto provider = mg::cluster::spawn_executor_actor(sys, std::make_shared<toy_ledger_executor>());
    int status = 0;
    int stop = 0;
    milliseconds backoff = first_backoff;
    while (!stop) {
      mg::cluster::movement_client client(sys);
      try {
        offer(client, where, flags["--key"], secret, flags["--executor-key"], provider);
        say("offering executor " + flags["--executor-key"] + " at " + client.where() +
            " (session actor " + std::to_string(client.session_address().id()) + ")");
        backoff = first_backoff;
        while (!(stop = stop_signal(stop_signals, milliseconds(0))) &&
               !client.session_lost(milliseconds(250))) {
        }
        if (!stop)
          say("lost the session to movegate; registering again");
      } catch (const refused& e) {
        std::cerr << "movegate-sibling-executor: " << e.what() << std::endl;
        status = 1;
        break;
      } catch (const std::exception& e) {
        std::cerr << "movegate-sibling-executor: " << e.what() << "; trying again in "
                  << backoff.count() << " ms" << std::endl;
        stop = stop_signal(stop_signals, backoff);
        backoff = std::min(backoff * 2, last_backoff);
      }
    }
    if (stop)
      say(std::string("stopping on ") + (stop == SIGTERM ? "SIGTERM" : "SIGINT"));
    // The actor system's end waits for every actor: a detached provider
    // must be stopped first.
    caf::anon_send_exit(provider, caf::exit_reason::user_shutdown);
    provider = nullptr;
    return status;
  } catch (const std::exception& e) {
    std::cerr << "movegate-sibling-executor: " << e.what() << std::endl;
    return 1;
  }
}
