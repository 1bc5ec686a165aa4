#pragma once
// What the /v3 and admin listeners share on cpp-httplib: JSON replies,
// JSON error bodies for what httplib answers itself (413, malformed
// requests), request logging, and start/stop on a thread of their own.
#include <chrono>
#include <httplib.h>
#include <string>
#include <thread>

#include "config/settings.hpp"
#include "domain/api.hpp"

namespace mg::http {

api::error payload_too_large();

/// MG_HTTP_REQUEST_TIMEOUT_SECONDS as a duration.
std::chrono::milliseconds request_timeout(const config::settings& s);
/// A handler failed for a reason other than the database: 503, never 500.
api::error internal_error();

/// Status, extra headers and the body (application/json unless the reply
/// names another Content-Type).
void write_reply(httplib::Response& res, const api::reply& reply);

/// One debug JSON line: method, raw path (no query), status, key_id, ms.
void log_request(const httplib::Request& req, int status, const std::string& key_id,
                 std::chrono::steady_clock::time_point started);

/// Error handler giving SPEC §5's JSON error body to responses httplib
/// makes itself (413, 400, 404 for unknown methods); an exception handler
/// that answers 503 "internal" instead of httplib's 500.
void install_error_handlers(httplib::Server& server);

/// Binds `host_port` (port 0 = any free port), runs listen on `thread` and
/// returns the bound port once the server accepts; throws
/// std::runtime_error when it cannot bind.
int start_listening(httplib::Server& server, std::thread& thread, const std::string& host_port,
                    const char* name);

/// Stops the server and joins its thread (no-op when not started).
void stop_listening(httplib::Server& server, std::thread& thread);

} // namespace mg::http
