#pragma once
// Template definitions for service_context.hpp.
#include "persistence/db.hpp"

namespace mg::api {

template <class F>
reply with_connection(service_context& ctx, F&& body) {
  try {
    auto lease = ctx.pool.acquire();
    try {
      return body(*lease);
    } catch (const pqxx::broken_connection&) {
      lease.discard();
      return error_reply(unavailable());
    } catch (const std::exception& e) {
      if (db::is_connection_error(e) || !lease->is_open()) {
        lease.discard();
        return error_reply(unavailable());
      }
      throw;
    }
  } catch (const pqxx::broken_connection&) {
    return error_reply(unavailable());
  }
}

} // namespace mg::api
