#include "actors/cluster/movement_client.hpp"

#include <caf/io/all.hpp>
#include <caf/io/network/default_multiplexer.hpp>
#include <caf/io/network/native_socket.hpp>
#include <random>

#include "domain/api_auth.hpp"

namespace mg::cluster {

using namespace std::chrono;

void configure(caf::actor_system_config& cfg, const std::optional<tls_files>& tls) {
  cfg.load<caf::io::middleman>();
  cfg.set("middleman.heartbeat-interval", caf::timespan{seconds(2)});
  cfg.set("middleman.connection-timeout", caf::timespan{seconds(10)});
  if (!tls)
    return;
  if (auto p = check_tls_files(*tls))
    throw client_error("cluster TLS: " + p->what);
  load_tls(cfg, *tls);
}

std::string random_nonce() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* hex = "0123456789abcdef";
  std::string s(32, '0');
  for (auto& c : s)
    c = hex[rng() & 15];
  return s;
}

movement_client::movement_client(caf::actor_system& sys, milliseconds timeout)
    : sys_(sys), self_(sys), timeout_(timeout) {}

std::string movement_client::describe(const caf::error& e, const char* what) const {
  if (e.category() == actors::cluster_error_category &&
      e.context().match_elements<int32_t, std::string>())
    return std::string(what) + " refused by movegate at " + where_ + " (" +
           std::to_string(e.context().get_as<int32_t>(0)) +
           "): " + e.context().get_as<std::string>(1);
  if (e == caf::sec::request_timeout)
    return std::string(what) + ": no answer from movegate at " + where_ + " within " +
           std::to_string(timeout_.count()) + " ms (peer dead, frozen or unreachable)";
  if (e == caf::sec::request_receiver_down)
    return std::string(what) + ": movegate at " + where_ +
           " is gone (its node went down or the connection was lost)";
  return std::string(what) + " failed against movegate at " + where_ + ": " + sys_.render(e);
}

namespace {

/// Whether a plain TCP connection to `host`:`port` opens: a TLS connect that
/// failed against a port that listens failed in its handshake.
bool tcp_listening(const std::string& host, uint16_t port) {
  auto fd = caf::io::network::new_tcp_connection(host, port);
  if (!fd)
    return false;
  caf::io::network::close_socket(*fd);
  return true;
}

} // namespace

std::string movement_client::describe_connect_failure(const caf::error& e, const std::string& host,
                                                      uint16_t port) const {
  if (e == caf::sec::request_timeout)
    return "connect: no answer from " + where_ + " within " + std::to_string(timeout_.count()) +
           " ms";
  // Which of the two a refused TLS handshake gives depends on which side
  // sees the failure first.
  const bool refused_in_handshake =
      e == caf::sec::disconnect_during_handshake ||
      (e == caf::sec::cannot_connect_to_node && tls_enabled(sys_) && tcp_listening(host, port));
  if (refused_in_handshake)
    return "connect: " + where_ + " closed the connection during the handshake (" +
           (tls_enabled(sys_) ? "TLS refused: it does not speak TLS, or one side's certificate "
                                "does not chain to the other side's CA"
                              : "it may require TLS") +
           ")";
  return "connect: cannot reach movegate at " + where_ + ": " + sys_.render(e);
}

void movement_client::connect(const std::string& host, uint16_t port) {
  where_ = host + ":" + std::to_string(port);
  session_ = nullptr;
  api_ = nullptr;
  auto expected_ifs = sys_.message_types(caf::detail::type_list<actors::movement_api_actor>{});
  std::string failure;
  self_->request(connection_manager(sys_), timeout_, caf::connect_atom::value, host, port)
      .receive(
          [&](const caf::node_id&, caf::strong_actor_ptr& ptr, std::set<std::string>& ifs) {
            if (!ptr)
              failure = "no actor is published at " + where_;
            else if (ifs != expected_ifs)
              failure = "the actor published at " + where_ +
                        " is not a movegate movement_api (protocol mismatch)";
            else
              api_ = caf::actor_cast<actors::movement_api_actor>(std::move(ptr));
          },
          [&](caf::error& e) { failure = describe_connect_failure(e, host, port); });
  if (!failure.empty())
    throw client_error(failure);
}

void movement_client::login(const std::string& key_id, const std::string& secret) {
  auto ts =
      static_cast<uint64_t>(duration_cast<seconds>(system_clock::now().time_since_epoch()).count());
  auto nonce = random_nonce();
  login_with(key_id, ts, nonce, api::sign_cluster_login(secret, key_id, std::to_string(ts), nonce));
}

void movement_client::login_with(const std::string& key_id, uint64_t timestamp,
                                 const std::string& nonce, const std::string& signature_hex) {
  if (!api_)
    throw client_error("login: not connected");
  if (timestamp == 0)
    timestamp = static_cast<uint64_t>(
        duration_cast<seconds>(system_clock::now().time_since_epoch()).count());
  session_ = nullptr;
  token_.clear();
  std::string failure;
  self_->request(api_, timeout_, actors::login_atom::value, key_id, timestamp, nonce, signature_hex)
      .receive(
          [&](caf::actor& s, std::string& token) {
            session_ = caf::actor_cast<actors::movement_session>(std::move(s));
            token_ = std::move(token);
          },
          [&](caf::error& e) { failure = describe(e, "login"); });
  if (!failure.empty())
    throw client_error(failure);
  if (!session_)
    throw client_error("login: movegate at " + where_ + " answered without a session");
  self_->monitor(session_);
}

// The session's proxy goes down when the session actor ends or when the
// connection to its node is lost, so one monitor covers both.
bool movement_client::session_lost(milliseconds timeout) {
  auto deadline = steady_clock::now() + timeout;
  while (session_) {
    auto left = duration_cast<milliseconds>(deadline - steady_clock::now());
    if (left.count() <= 0)
      return false;
    bool timed_out = false;
    self_->receive(
        [&](caf::down_msg& dm) {
          if (dm.source == session_.address())
            session_ = nullptr;
        },
        caf::after(left) >> [&] { timed_out = true; });
    if (timed_out)
      return !session_;
  }
  return true;
}

template <class Atom, class... Ts>
reply movement_client::call(const char* what, Atom atom, Ts&&... xs) {
  if (!session_)
    throw client_error(std::string(what) + ": not logged in");
  reply r;
  std::string failure;
  self_->request(session_, timeout_, atom, token_, std::forward<Ts>(xs)...)
      .receive(
          [&](int32_t status, std::string& body) {
            r.status = status;
            r.body = std::move(body);
          },
          [&](caf::error& e) { failure = describe(e, what); });
  if (!failure.empty())
    throw client_error(failure);
  return r;
}

reply movement_client::create(const std::string& json_body) {
  return call("create", actors::create_atom::value, json_body);
}
reply movement_client::approve(const std::string& id, const std::string& json_body) {
  return call("approve", actors::approve_atom::value, id, json_body);
}
reply movement_client::reject(const std::string& id, const std::string& json_body) {
  return call("reject", actors::reject_atom::value, id, json_body);
}
reply movement_client::cancel(const std::string& id, const std::string& json_body) {
  return call("cancel", actors::cancel_atom::value, id, json_body);
}
reply movement_client::get(const std::string& id) {
  return call("get", actors::get_atom::value, id);
}
reply movement_client::list(const std::string& query) {
  return call("list", actors::list_atom::value, query);
}

// The subscriber is this client's scoped actor: pushed events wait in its
// mailbox (a blocking receive leaves messages it does not match there), and
// when the client goes away the server sees it down and drops it.
reply movement_client::subscribe(const std::string& id, const std::string& after_event_id) {
  return call("subscribe", actors::subscribe_atom::value, id, after_event_id,
              caf::actor_cast<caf::actor>(self_));
}
reply movement_client::unsubscribe(const std::string& id) {
  return call("unsubscribe", actors::unsub_atom::value, id, caf::actor_cast<caf::actor>(self_));
}

std::optional<pushed_event> movement_client::next_event(milliseconds timeout) {
  std::optional<pushed_event> out;
  self_->receive(
      [&](actors::event_atom, std::string& request_id, std::string& event_id, uint64_t seq,
          std::string& json) {
        out = pushed_event{std::move(request_id), std::move(event_id), seq, std::move(json)};
      },
      caf::after(timeout) >> [] {});
  return out;
}

reply movement_client::register_executor(const std::string& key,
                                         const actors::remote_executor_actor& provider) {
  return call("register_executor", actors::reg_exec_atom::value, key,
              caf::actor_cast<caf::actor>(provider));
}

reply movement_client::register_signer(const std::string& key,
                                       const actors::remote_signer_actor& provider) {
  return call("register_signer", actors::reg_sign_atom::value, key,
              caf::actor_cast<caf::actor>(provider));
}

std::string movement_client::api_status() {
  if (!api_)
    throw client_error("status: not connected");
  std::string out, failure;
  self_->request(api_, timeout_, actors::status_atom::value)
      .receive([&](std::string& s) { out = std::move(s); },
               [&](caf::error& e) { failure = describe(e, "status"); });
  if (!failure.empty())
    throw client_error(failure);
  return out;
}

} // namespace mg::cluster
