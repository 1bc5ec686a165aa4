#include "actors/cluster/movement_api.hpp"

#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>
#include <chrono>
#include <map>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <optional>
#include <set>
#include <stdexcept>
#include <type_traits>
#include <variant>

#include "actors/cluster/event_fanout.hpp"
#include "actors/cluster/remote_providers.hpp"
#include "config/log.hpp"
#include "domain/json.hpp"
#include "domain/json_writer.hpp"
#include "domain/url.hpp"
#include "services/call_failure.hpp"
#include "services/nonce_service.hpp"

namespace mg::actors {

namespace {

constexpr size_t max_body_bytes = 1024 * 1024; // as /v3: over 1 MiB → 413
constexpr long long max_skew_seconds = 300;
constexpr long prune_every_logins = 256;
// Failed logins per peer address: a burst of 10, then one per second.
constexpr double failed_login_burst = 10, failed_logins_per_second = 1;
// Successful logins per key: a burst of 32, then two per second (a sibling
// logs in once and keeps its session; this only bounds churn).
constexpr double login_burst = 32, logins_per_second = 2;
// How long the api waits for the middleman to name a sender's address.
constexpr auto peer_lookup_timeout = std::chrono::seconds(2);
// How long a session waits for the fan-out's answer.
constexpr auto fanout_timeout = std::chrono::seconds(10);

using call_result = std::tuple<int32_t, std::string>;

call_result answer(const api::reply& r) {
  return {static_cast<int32_t>(r.status), r.body};
}

caf::error refusal(int status, std::string message) {
  return caf::error(static_cast<uint8_t>(status == 401 ? 1 : 2), cluster_error_category,
                    caf::make_message(static_cast<int32_t>(status), std::move(message)));
}

long long unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// --- sessions ---------------------------------------------------------------

struct session_state {
  std::shared_ptr<cluster_door> door;
  api::caller who;
  /// The 64 hex characters login answered; every message must carry them.
  std::string token;
  static inline const char* name = "movement_session";
};

using session_pointer = movement_session::stateful_pointer<session_state>;

/// 256 bits from OpenSSL's CSPRNG as 64 lower-case hex characters.
std::string new_session_token() {
  unsigned char raw[32];
  if (RAND_bytes(raw, sizeof raw) != 1)
    throw std::runtime_error("RAND_bytes failed");
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (unsigned char b : raw) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

/// Constant time over the token's length (its length is public).
bool token_matches(const session_state& st, const std::string& given) {
  return given.size() == st.token.size() &&
         CRYPTO_memcmp(given.data(), st.token.data(), st.token.size()) == 0;
}

call_result bad_token(session_pointer self, const char* call) {
  log::component_scope component("cluster");
  log::warn("cluster session refused: bad session token",
            {{"call", call}, {"session_key_id", self->state.who.key_id}});
  return answer(api::error_reply({401, "unauthorized", "bad session token", {}}));
}

/// The front door's checks after auth, in SPEC §5's order (413 → 403 →
/// 429 → 400), then the service call; never throws.
template <class F>
call_result guarded(session_pointer self, const char* call, api::scope needed,
                    const std::string* body, F&& service_call) {
  log::component_scope component("cluster");
  auto& st = self->state;
  api::reply r;
  try {
    if (body && body->size() > max_body_bytes) {
      r = api::error_reply({413, "payload_too_large", "request body is over 1 MiB", {}});
    } else if (!st.who.has(needed)) {
      r = api::error_reply(
          api::forbidden(std::string("key lacks scope '") + api::to_string(needed) + "'"));
    } else if (int wait = st.door->rate_limit ? st.door->rate_limit(st.who.key_id) : 0) {
      r = api::error_reply({429,
                            "rate_limited",
                            "rate limit exceeded; retry in " + std::to_string(wait) + " s",
                            {}});
    } else {
      json::read_result empty;
      empty.doc.SetObject();
      std::string why;
      std::optional<json::read_result> parsed;
      if (body && !body->empty() && !(parsed = json::read(*body, &why)))
        r = api::error_reply(api::bad_request("body is not acceptable JSON: " + why));
      else if (parsed && !parsed->doc.IsObject())
        r = api::error_reply(api::bad_request("body must be a JSON object"));
      else {
        const auto& in = parsed ? *parsed : empty;
        // create also takes the reader's serialisation of each member.
        if constexpr (std::is_invocable_v<F, const json::value&,
                                          const std::map<std::string, std::string>&>)
          r = service_call(static_cast<const json::value&>(in.doc), in.members);
        else
          r = service_call(static_cast<const json::value&>(in.doc));
      }
    }
  } catch (const std::exception& e) {
    switch (services::classify_failure(e)) {
    case services::call_failure::refused_value:
      log::warn("cluster call refused data", {{"call", call}, {"error", e.what()}});
      r = api::error_reply(api::bad_request("a value in the request is not acceptable"));
      break;
    case services::call_failure::database_away:
      log::error("cluster call lost the database", {{"call", call}, {"error", e.what()}});
      r = api::error_reply(api::unavailable());
      break;
    case services::call_failure::fault:
      log::error("cluster call failed", {{"call", call}, {"error", e.what()}});
      r = api::error_reply(api::unavailable("internal error; retry later"));
      break;
    }
  }
  log::info("cluster call", {{"call", call}, {"key_id", st.who.key_id}, {"status", r.status}});
  return answer(r);
}

/// The paging parameters of GET /v3/movements (as http/routes.cpp: any
/// other parameter, or one given twice, is a 400).
std::variant<services::list_query, api::reply> list_params(const std::string& raw_query) {
  services::list_query q;
  std::set<std::string> seen;
  for (auto& [key, value] : api::decode_query(raw_query)) {
    if (key != "state" && key != "limit" && key != "cursor")
      return api::error_reply(
          api::bad_request("unknown query parameter", {{key, "not a parameter of this call"}}));
    if (!seen.insert(key).second)
      return api::error_reply(api::bad_request("query parameter given twice", {{key, "repeated"}}));
    (key == "state" ? q.state : key == "limit" ? q.limit : q.cursor) = value;
  }
  return q;
}

/// Subscribe/unsub go to the fan-out as a request, and the session answers
/// itself: a delegated answer would carry the fan-out's handle to the peer.
template <class... Ts>
caf::result<int32_t, std::string> ask_fanout(session_pointer self, const char* call, Ts&&... xs) {
  auto rp = self->make_response_promise<int32_t, std::string>();
  std::string what = call;
  self->request(self->state.door->fanout, fanout_timeout, std::forward<Ts>(xs)...)
      .then(
          [rp](int32_t status, std::string& body) mutable { rp.deliver(status, std::move(body)); },
          [rp, what](caf::error& e) mutable {
            log::warn("cluster call: event fan-out did not answer",
                      {{"call", what}, {"error", caf::to_string(e)}});
            auto r = api::error_reply(api::unavailable("event fan-out unavailable; retry later"));
            rp.deliver(static_cast<int32_t>(r.status), std::move(r.body));
          });
  return rp;
}

movement_session::behavior_type session(session_pointer self, std::shared_ptr<cluster_door> door,
                                        api::caller who, std::string token, caf::actor client) {
  self->state.door = std::move(door);
  self->state.who = std::move(who);
  self->state.token = std::move(token);
  // Counted in by login; counted out however the session ends.
  self->attach_functor([counter = self->state.door->sessions, key = self->state.who.key_id] {
    counter->remove(key);
  });
  // The session lives as long as the client's actor (its node connected).
  self->monitor(client);
  // A normal quit: any other reason would travel over the link to the
  // movement_api.
  self->set_down_handler([self, watched = client.address()](caf::down_msg& msg) {
    if (msg.source != watched)
      return;
    log::info("cluster session ended: client gone", {{"key_id", self->state.who.key_id}});
    self->quit();
  });
  // Anything that matches no handler (a message of the protocol before
  // session tokens, or junk) is refused like a bad token.
  self->set_default_handler(
      [self](caf::scheduled_actor*, caf::message_view&) -> caf::result<caf::message> {
        auto [status, body] = bad_token(self, "unknown");
        return caf::make_message(status, std::move(body));
      });
  auto transition = [self](const char* call, const std::string& token, const std::string& id,
                           const std::string& body,
                           api::reply (services::movement_service::*member)(
                               const api::caller&, const std::string&, const json::value&)) {
    if (!token_matches(self->state, token))
      return bad_token(self, call);
    auto& m = self->state.door->movements;
    return guarded(self, call, api::scope::approve, &body,
                   [&](const json::value& doc) { return (m.*member)(self->state.who, id, doc); });
  };
  return {
      [self](create_atom, const std::string& token, const std::string& body) -> call_result {
        if (!token_matches(self->state, token))
          return bad_token(self, "create");
        return guarded(self, "create", api::scope::create, &body,
                       [&](const json::value& doc, const std::map<std::string, std::string>& m) {
                         return self->state.door->movements.create(self->state.who, doc, m);
                       });
      },
      [transition](approve_atom, const std::string& token, const std::string& id,
                   const std::string& body) -> call_result {
        return transition("approve", token, id, body, &services::movement_service::approve);
      },
      [transition](reject_atom, const std::string& token, const std::string& id,
                   const std::string& body) -> call_result {
        return transition("reject", token, id, body, &services::movement_service::reject);
      },
      [transition](cancel_atom, const std::string& token, const std::string& id,
                   const std::string& body) -> call_result {
        return transition("cancel", token, id, body, &services::movement_service::cancel);
      },
      [self](get_atom, const std::string& token, const std::string& id) -> call_result {
        if (!token_matches(self->state, token))
          return bad_token(self, "get");
        return guarded(self, "get", api::scope::read, nullptr, [&](const json::value&) {
          return self->state.door->movements.get(self->state.who, id);
        });
      },
      [self](subscribe_atom, const std::string& token, const std::string& id,
             const std::string& after,
             const caf::actor& subscriber) -> caf::result<int32_t, std::string> {
        if (!token_matches(self->state, token)) {
          auto [status, body] = bad_token(self, "subscribe");
          return {status, std::move(body)};
        }
        // Scope and rate limit here; the fan-out owns the subscription.
        bool admitted = false;
        auto refused =
            guarded(self, "subscribe", api::scope::read, nullptr, [&](const json::value&) {
              admitted = true;
              return api::reply{200, "{}", {}};
            });
        if (!admitted)
          return {std::get<0>(refused), std::move(std::get<1>(refused))};
        return ask_fanout(self, "subscribe", subscribe_atom::value, id, after, subscriber);
      },
      [self](unsub_atom, const std::string& token, const std::string& id,
             const caf::actor& subscriber) -> caf::result<int32_t, std::string> {
        if (!token_matches(self->state, token)) {
          auto [status, body] = bad_token(self, "unsub");
          return {status, std::move(body)};
        }
        return ask_fanout(self, "unsub", unsub_atom::value, id, subscriber);
      },
      // Remote providers (issue 6): actors/cluster/remote_providers.hpp.
      [self](reg_exec_atom, const std::string& token, const std::string& key,
             const caf::actor& provider) -> call_result {
        if (!token_matches(self->state, token))
          return bad_token(self, "reg_exec");
        return register_remote_provider(self->system(), self->state.who, provider_kind::executor,
                                        key, provider, caf::actor_cast<caf::actor>(self));
      },
      [self](reg_sign_atom, const std::string& token, const std::string& key,
             const caf::actor& provider) -> call_result {
        if (!token_matches(self->state, token))
          return bad_token(self, "reg_sign");
        return register_remote_provider(self->system(), self->state.who, provider_kind::signer, key,
                                        provider, caf::actor_cast<caf::actor>(self));
      },
      [self](list_atom, const std::string& token, const std::string& raw_query) -> call_result {
        if (!token_matches(self->state, token))
          return bad_token(self, "list");
        return guarded(self, "list", api::scope::read, nullptr, [&](const json::value&) {
          auto q = list_params(raw_query);
          if (auto* refused = std::get_if<api::reply>(&q))
            return *refused;
          return self->state.door->movements.list(self->state.who,
                                                  std::get<services::list_query>(q));
        });
      },
  };
}

// --- the published actor ----------------------------------------------------

struct api_state {
  std::shared_ptr<cluster_door> door;
  uint64_t logins = 0;
  uint64_t refused = 0;
  uint64_t throttled = 0;
  /// Failed logins per peer address, successful ones per key.
  login_buckets failed_by_address{failed_login_burst, failed_logins_per_second};
  login_buckets succeeded_by_key{login_burst, logins_per_second};
  static inline const char* name = "movement_api";
};

using api_pointer = movement_api_actor::stateful_pointer<api_state>;

/// "" when the nonce is fresh (and now remembered); else why not.
caf::error remember_nonce(cluster_door& door, const std::string& key_id, const std::string& nonce) {
  bool fresh = false;
  try {
    fresh = services::remember_nonce(door.pool, key_id, nonce, [&door] {
      if (++door.logins_since_prune < prune_every_logins)
        return false;
      door.logins_since_prune = 0;
      return true;
    });
  } catch (const std::exception& e) {
    log::warn("cluster login: nonce check failed", {{"error", e.what()}});
    return refusal(503, "database unavailable; retry later");
  }
  if (!fresh)
    return refusal(401, "replayed nonce");
  return caf::none;
}

/// The peer address of `sender`'s node as the middleman's connection to it
/// knows it ("local" for this process's own actors); "" when the
/// middleman has no connection to that node.
std::string peer_address(api_pointer self, const caf::strong_actor_ptr& sender) {
  if (sender->node() == self->node())
    return "local";
  std::string host;
  caf::scoped_actor ask{self->system(), true};
  ask->request(self->system().middleman().actor_handle(), peer_lookup_timeout, caf::get_atom::value,
               sender->node())
      .receive([&](const caf::node_id&, std::string& h, uint16_t) { host = std::move(h); },
               [&](caf::error&) {});
  return host;
}

using login_result = caf::result<caf::actor, std::string>;

login_result login(api_pointer self, const std::string& key_id, uint64_t timestamp,
                   const std::string& nonce, const std::string& signature) {
  log::component_scope component("cluster");
  auto& st = self->state;
  auto& door = *st.door;
  std::string address;
  auto refuse = [&](int status, std::string why) -> login_result {
    ++(status == 429 ? st.throttled : st.refused);
    log::warn("cluster login refused",
              {{"key_id", key_id}, {"peer", address}, {"status", status}, {"reason", why}});
    return refusal(status, std::move(why));
  };
  // A failed proof costs the peer's address one token.
  auto fail = [&](std::string why) -> login_result {
    st.failed_by_address.take(address);
    return refuse(401, std::move(why));
  };
  // The session lives as long as the sender: one that cannot be monitored
  // would make a session nothing ever ends.
  auto sender = self->current_sender();
  if (!sender)
    return refuse(401, "login must come from an actor movegate can monitor (no anonymous send)");
  address = peer_address(self, sender);
  if (address.empty())
    return refuse(401, "the sender's node has no connection to this process");
  if (int wait = st.failed_by_address.wait(address))
    return refuse(429, "too many failed logins from " + address + "; retry in " +
                           std::to_string(wait) + " s");
  long long skew = unix_now() - static_cast<long long>(timestamp);
  if (timestamp > static_cast<uint64_t>(1) << 62 || skew > max_skew_seconds ||
      skew < -max_skew_seconds)
    return fail("timestamp is more than 300 s away from the server's clock");
  if (!api::valid_nonce(nonce))
    return fail("nonce must be 16-128 characters of [A-Za-z0-9_-]");
  auto key = door.keys.find(key_id);
  if (key == door.keys.end())
    return fail("unknown key");
  auto expected =
      api::sign_cluster_login(key->second.secret, key_id, std::to_string(timestamp), nonce);
  if (!api::constant_time_equal(expected, signature))
    return fail("bad signature");
  if (door.sessions->live(key_id) >= door.sessions->max())
    return refuse(429, "key holds " + std::to_string(door.sessions->max()) +
                           " live sessions (MG_CLUSTER_MAX_SESSIONS_PER_KEY); end one first");
  if (int wait = st.succeeded_by_key.wait(key_id))
    return refuse(429, "too many logins for this key; retry in " + std::to_string(wait) + " s");
  // Only a verified proof spends a row in api_nonces.
  if (auto err = remember_nonce(door, key_id, nonce)) {
    if (err.code() == 1) // replayed: a failed proof
      st.failed_by_address.take(address);
    ++st.refused;
    log::warn("cluster login refused",
              {{"key_id", key_id}, {"peer", address}, {"reason", "nonce"}});
    return err;
  }
  if (!door.sessions->try_add(key_id))
    return refuse(429, "key holds " + std::to_string(door.sessions->max()) +
                           " live sessions (MG_CLUSTER_MAX_SESSIONS_PER_KEY); end one first");
  st.succeeded_by_key.take(key_id);
  api::caller who{key_id, key->second.scopes};
  auto token = new_session_token();
  auto client = caf::actor_cast<caf::actor>(sender);
  auto s = self->spawn<caf::detached + caf::linked>(session, st.door, std::move(who), token,
                                                    std::move(client));
  ++st.logins;
  log::info(
      "cluster login",
      {{"key_id", key_id}, {"peer", address}, {"live_sessions", door.sessions->live(key_id)}});
  return {caf::actor_cast<caf::actor>(s), std::move(token)};
}

movement_api_actor::behavior_type movement_api(api_pointer self,
                                               std::shared_ptr<cluster_door> door) {
  self->state.door = std::move(door);
  // Linked, so it stops with the front door; it catches its own errors, so
  // a database hiccup never ends the subscriptions.
  self->state.door->fanout =
      spawn_event_fanout(self, self->state.door->pool, self->state.door->subscribers);
  // A session ending normally must not take the front door down.
  // Only a shutdown (or kill) takes the front door down, and with it every
  // linked session; a session ending, however it ends, does not.
  self->set_exit_handler([self](caf::exit_msg& msg) {
    if (msg.reason == caf::exit_reason::user_shutdown || msg.reason == caf::exit_reason::kill)
      self->quit(msg.reason);
  });
  return {
      [self](login_atom, const std::string& key_id, uint64_t timestamp, const std::string& nonce,
             const std::string& signature) {
        return login(self, key_id, timestamp, nonce, signature);
      },
      [self](status_atom) {
        return json::writer()
            .begin_object()
            .member("logins", self->state.logins)
            .member("refused", self->state.refused)
            .member("throttled", self->state.throttled)
            .member("subscribers", self->state.door->subscribers->load())
            .end_object()
            .str();
      },
  };
}

} // namespace

cluster_door::cluster_door(services::movement_service& m, db::connection_pool& p,
                           std::vector<api::api_key> key_list,
                           std::function<int(const std::string&)> limiter, int max_sessions_per_key)
    : movements(m), pool(p), rate_limit(std::move(limiter)),
      sessions(std::make_shared<session_counter>(max_sessions_per_key)) {
  for (auto& k : key_list) {
    std::string id = k.key_id;
    keys.emplace(std::move(id), std::move(k));
  }
}

cluster_address parse_cluster_address(const std::string& host_port) {
  domain::host_port hp;
  try {
    hp = domain::parse_host_port(host_port);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("MG_CLUSTER_ADDR ") + e.what());
  }
  cluster_address a;
  a.host = hp.host;
  a.port = static_cast<uint16_t>(hp.port);
  a.loopback = a.host == "localhost" || a.host == "::1" || a.host.rfind("127.", 0) == 0;
  return a;
}

std::optional<cluster::tls_files> cluster_tls_files(const config::settings& s) {
  if (!s.cluster_tls())
    return std::nullopt;
  return cluster::tls_files{s.cluster_tls_cert_file, s.cluster_tls_key_file, s.cluster_tls_ca_file};
}

std::string cluster_door_refusal(const config::settings& s) {
  cluster_address a;
  try {
    a = parse_cluster_address(s.cluster_addr);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  if (auto tls = cluster_tls_files(s)) {
    auto p = cluster::check_tls_files(*tls);
    if (!p)
      return "";
    using file = cluster::tls_problem::file;
    const char* name = p->which == file::certificate ? "MG_CLUSTER_TLS_CERT_FILE"
                       : p->which == file::key       ? "MG_CLUSTER_TLS_KEY_FILE"
                                                     : "MG_CLUSTER_TLS_CA_FILE";
    return std::string(name) + ": " + p->what;
  }
  if (a.loopback)
    return "";
  return "MG_CLUSTER_ADDR=" + s.cluster_addr +
         " is not a loopback address: the cluster actor protocol must not travel unencrypted; "
         "set MG_CLUSTER_TLS_CERT_FILE, MG_CLUSTER_TLS_KEY_FILE and MG_CLUSTER_TLS_CA_FILE for "
         "mutual TLS, or bind 127.0.0.1 (or ::1)";
}

movement_api_actor spawn_movement_api(caf::actor_system& sys, std::shared_ptr<cluster_door> door) {
  return sys.spawn<caf::detached>(movement_api, std::move(door));
}

uint16_t publish_movement_api(caf::actor_system& sys, const movement_api_actor& api,
                              const std::string& host_port) {
  auto a = parse_cluster_address(host_port);
  std::string in = a.host == "localhost" ? "127.0.0.1" : a.host;
  const char* addr = in.empty() ? nullptr : in.c_str();
  auto port = cluster::tls_enabled(sys) ? caf::openssl::publish(api, a.port, addr, true)
                                        : sys.middleman().publish(api, a.port, addr, true);
  if (!port)
    throw std::runtime_error("MG_CLUSTER_ADDR: cannot publish movement_api on " + host_port + ": " +
                             sys.render(port.error()));
  return *port;
}

void stop_movement_api(caf::actor_system& sys, movement_api_actor& api) {
  if (!api)
    return;
  // TLS or not, the doorman lives in the one BASP broker both connection
  // managers share (caf::openssl::unpublish does not compile in 0.17.6).
  sys.middleman().unpublish(api, 0);
  caf::scoped_actor self{sys};
  self->monitor(api);
  self->send_exit(api, caf::exit_reason::user_shutdown);
  self->receive([](caf::down_msg&) {},
                caf::after(std::chrono::seconds(5)) >>
                    [] { log::warn("movement_api did not stop within 5 s"); });
  api = nullptr;
}

} // namespace mg::actors
