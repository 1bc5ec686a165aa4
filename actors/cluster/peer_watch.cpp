#include "actors/cluster/peer_watch.hpp"

#include <caf/io/all.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <set>

#include "actors/cluster/cluster_tls.hpp"
#include "config/log.hpp"
#include "persistence/cluster_store.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::actors {

namespace {

struct peer_watch_state {
  static inline const char* name = "peer-watch";
  std::unique_ptr<db::connection_slot> conn;
  std::map<caf::actor_addr, std::string> watched;
  std::set<std::string> dialled;     // watched, or a dial in flight
  std::set<std::string> unreachable; // logged once until reached
};

using self_ptr = peer_watch_actor::stateful_pointer<peer_watch_state>;

constexpr auto dial_timeout = std::chrono::seconds(3);

bool dialable(const std::string& host) {
  return !host.empty() && host != "0.0.0.0" && host != "::";
}

void watch(self_ptr self, const std::string& peer, caf::strong_actor_ptr& ptr,
           const peer_events& events) {
  auto& st = self->state;
  self->monitor(ptr);
  st.watched[caf::actor_cast<caf::actor_addr>(ptr)] = peer;
  st.unreachable.erase(peer);
  log::info("watching cluster peer", {{"peer", peer}});
  events.connected(peer);
}

void dial(self_ptr self, const db::cluster_peer& p, const peer_events& events) {
  auto peer = p.runtime_node;
  auto where = p.host + ":" + std::to_string(p.cluster_port);
  self->state.dialled.insert(peer);
  self->request(cluster::connection_manager(self->system()), dial_timeout, caf::connect_atom::value,
                p.host, static_cast<uint16_t>(p.cluster_port))
      .then(
          [=](caf::node_id&, caf::strong_actor_ptr& ptr, std::set<std::string>&) {
            if (ptr) {
              watch(self, peer, ptr, events);
              return;
            }
            self->state.dialled.erase(peer);
          },
          [=](caf::error& e) {
            auto& st = self->state;
            st.dialled.erase(peer);
            if (st.unreachable.insert(peer).second)
              log::warn("cannot reach cluster peer; its lease alone will tell",
                        {{"peer", peer}, {"addr", where}, {"error", self->system().render(e)}});
          });
}

void refresh(self_ptr self, const peer_watch_config& cfg, const peer_events& events) {
  auto& st = self->state;
  std::vector<db::cluster_peer> peers;
  try {
    pqxx::read_transaction tx(st.conn->get());
    peers = db::live_peers(tx, cfg.runtime_node, cfg.lease_seconds);
  } catch (const std::exception& e) {
    st.conn->reset();
    log::warn("peer watch cannot read cluster_nodes", {{"error", e.what()}});
    return;
  }
  for (auto& p : peers)
    if (dialable(p.host) && !st.dialled.count(p.runtime_node))
      dial(self, p, events);
}

peer_watch_actor::behavior_type peer_watch(self_ptr self, peer_watch_config cfg,
                                           peer_events events) {
  self->state.conn = std::make_unique<db::connection_slot>(
      db::with_application_name(cfg.database_url, "movegate:peer_watch"));
  self->set_down_handler([=](caf::down_msg& msg) {
    auto& st = self->state;
    auto it = st.watched.find(msg.source);
    if (it == st.watched.end())
      return;
    auto peer = it->second;
    st.watched.erase(it);
    st.dialled.erase(peer);
    log::warn("cluster peer connection lost; looking at its lease now",
              {{"peer", peer}, {"reason", self->system().render(msg.reason)}});
    events.lost(peer);
  });
  self->send(self, tick_atom::value);
  auto every = std::chrono::milliseconds(static_cast<long>(cfg.refresh_seconds * 1000));
  return {
      [=](tick_atom) {
        refresh(self, cfg, events);
        self->delayed_send(self, every, tick_atom::value);
      },
  };
}

} // namespace

peer_watch_actor spawn_peer_watch(caf::actor_system& sys, peer_watch_config cfg,
                                  peer_events events) {
  return sys.spawn<caf::detached>(peer_watch, std::move(cfg), std::move(events));
}

void stop_peer_watch(caf::actor_system& sys, peer_watch_actor& watch) {
  if (!watch)
    return;
  caf::scoped_actor self{sys};
  self->monitor(watch);
  self->send_exit(watch, caf::exit_reason::user_shutdown);
  self->receive([](caf::down_msg&) {}, caf::after(std::chrono::seconds(5)) >>
                                           [] { log::warn("peer watch did not stop within 5 s"); });
  watch = nullptr;
}

} // namespace mg::actors
