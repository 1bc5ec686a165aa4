#include "http/server_common.hpp"

#include <atomic>
#include <memory>
#include <stdexcept>
#include <strings.h>
#include <sys/socket.h>

#include "config/log.hpp"
#include "domain/url.hpp"
#include "http/guarded_server.hpp"

namespace mg::http {

api::error payload_too_large() {
  return {413, "payload_too_large", "request body is over 1 MiB", {}};
}

std::chrono::milliseconds request_timeout(const config::settings& s) {
  return std::chrono::milliseconds(static_cast<long long>(s.http_request_timeout_seconds * 1000));
}

api::error internal_error() {
  return {503, "internal", "internal error; retry later", {}};
}

void write_reply(httplib::Response& res, const api::reply& reply) {
  res.status = reply.status;
  std::string content_type = "application/json";
  for (const auto& [name, value] : reply.headers) {
    if (strcasecmp(name.c_str(), "Content-Type") == 0)
      content_type = value;
    else
      res.set_header(name, value);
  }
  res.set_content(reply.body, content_type);
}

void log_request(const httplib::Request& req, int status, const std::string& key_id,
                 std::chrono::steady_clock::time_point started) {
  if (!log::enabled(log::level::debug))
    return;
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  // The path without its query; headers (signatures) are never logged.
  log::debug("http request", {{"method", req.method},
                              {"path", req.target.substr(0, req.target.find('?'))},
                              {"status", status},
                              {"key_id", key_id.substr(0, 128)},
                              {"ms", ms}});
}

void install_error_handlers(httplib::Server& server) {
  httplib::Server::HandlerWithResponse on_error = [](const httplib::Request& req,
                                                     httplib::Response& res) {
    // Our own handlers always write a body: leave those alone.
    if (!res.body.empty())
      return httplib::Server::HandlerResponse::Unhandled;
    // httplib answered itself (framing, a request it could not read): what
    // follows on this connection cannot be trusted to start a request.
    close_connection_after_reply();
    api::error e;
    if (request_timed_out()) {
      res.status = 408;
      e = {408, "request_timeout", "request not received in time", {}};
    } else if (res.status == 413)
      e = payload_too_large();
    else if (res.status == 404)
      e = api::not_found("no such path");
    else if (res.status >= 500)
      e = internal_error();
    else
      e = api::error{res.status, "invalid_request", "malformed request", {}};
    if (res.status >= 500)
      res.status = 503;
    write_reply(res, api::error_reply(e));
    log_request(req, res.status, req.get_header_value("X-QTG-Key-Id"),
                std::chrono::steady_clock::now());
    return httplib::Server::HandlerResponse::Handled;
  };
  server.set_error_handler(std::move(on_error));
  server.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown exception";
        try {
          if (ep)
            std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        log::error("http handler threw", {{"method", req.method}, {"error", what}});
        write_reply(res, api::error_reply(internal_error()));
      });
}

int start_listening(httplib::Server& server, std::thread& thread, const std::string& host_port,
                    const char* name) {
  if (thread.joinable())
    throw std::runtime_error(std::string(name) + " listener already started");
  auto addr = domain::parse_host_port(host_port);
  // httplib's default sets SO_REUSEPORT, which lets a second process bind a
  // port already being served and silently share it. SO_REUSEADDR alone
  // still allows a quick restart (TIME_WAIT) but refuses a live listener.
  server.set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // httplib writes a response's headers and body separately: with Nagle on,
  // the body waits for the client's delayed ACK (~40 ms a request).
  server.set_tcp_nodelay(true);
  int port = addr.port == 0 ? server.bind_to_any_port(addr.host)
                            : (server.bind_to_port(addr.host, addr.port) ? addr.port : -1);
  if (port < 0)
    throw std::runtime_error(std::string(name) + " listener cannot bind " + host_port);
  auto ended = std::make_shared<std::atomic<bool>>(false);
  thread = std::thread([&server, ended] {
    server.listen_after_bind();
    *ended = true;
  });
  // stop() only acts on a running server: wait until listen has begun, so
  // a stop right after start cannot be lost. Connections made meanwhile
  // wait in the bound socket's backlog.
  while (!server.is_running() && !*ended)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (*ended && !server.is_running()) {
    thread.join();
    throw std::runtime_error(std::string(name) + " listener stopped at once on " + host_port);
  }
  log::info("listening", {{"listener", name}, {"host", addr.host}, {"port", port}});
  return port;
}

void stop_listening(httplib::Server& server, std::thread& thread) {
  if (!thread.joinable())
    return;
  server.stop();
  thread.join();
}

} // namespace mg::http
