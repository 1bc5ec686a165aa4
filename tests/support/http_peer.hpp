#pragma once
// The plumbing of the real local HTTP peers the tests start (gateways,
// venues, sidecars, webhooks, JSON-RPC nodes): an httplib::Server on
// 127.0.0.1 and a free port, listening in its own thread.
#include <httplib.h>

#include <chrono>
#include <stdexcept>
#include <thread>

namespace mg::test {

/// Binds `server` (its handlers registered) and starts listening on
/// `thread`; returns the port once the server accepts connections.
inline int listen_in_background(httplib::Server& server, std::thread& thread) {
  const int port = server.bind_to_any_port("127.0.0.1");
  if (port <= 0)
    throw std::runtime_error("test HTTP peer: cannot bind 127.0.0.1");
  thread = std::thread([&server] { server.listen_after_bind(); });
  while (!server.is_running())
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return port;
}

/// Stops the server and waits for its thread.
inline void stop_listening(httplib::Server& server, std::thread& thread) {
  server.stop();
  if (thread.joinable())
    thread.join();
}

} // namespace mg::test
