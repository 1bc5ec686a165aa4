#pragma once
// Template definitions for service_context.hpp.
#include "persistence/db.hpp"
#include "persistence/transaction.hpp"

namespace mg::services {

template <class F> api::reply with_connection(db::connection_pool& pool, F&& body) {
  try {
    auto lease = pool.acquire();
    try {
      return body(*lease);
    } catch (const pqxx::broken_connection&) {
      lease.discard();
      return api::error_reply(api::unavailable());
    } catch (const std::exception& e) {
      if (db::is_connection_error(e) || !lease->is_open()) {
        lease.discard();
        return api::error_reply(api::unavailable());
      }
      throw;
    }
  } catch (const pqxx::broken_connection&) {
    return api::error_reply(api::unavailable());
  }
}

template <class F> api::reply with_connection(service_context& ctx, F&& body) {
  return with_connection(ctx.pool, std::forward<F>(body));
}

template <class F> api::reply with_transaction(service_context& ctx, F&& body) {
  return with_connection(ctx, [&](pqxx::connection& c) { return db::in_transaction(c, body); });
}

template <class F> api::reply with_read_transaction(service_context& ctx, F&& body) {
  return with_connection(ctx, [&](pqxx::connection& c) { return db::read_only(c, body); });
}

} // namespace mg::services
