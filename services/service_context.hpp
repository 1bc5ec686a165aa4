#pragma once
// What the API services share: the pool their calls borrow connections
// from, the settings, the plan cache, and the hook that tells the runtime a
// request changed (movement actor reconciles, dispatchers wake).
#include <functional>
#include <string>
#include <utility>

#include "config/settings.hpp"
#include "domain/api.hpp"
#include "domain/executor.hpp"
#include "domain/request_change.hpp"
#include "persistence/connection_pool.hpp"
#include "persistence/template_store.hpp"

namespace mg::services {

// Every service call takes the verified caller and answers a reply, the
// shapes all front doors share.
using api::caller;
using api::reply;

struct service_context {
  db::connection_pool& pool;
  const config::settings& settings;
  db::plan_cache& plans;
  /// Called after a commit that changed request `id` (may be empty: then
  /// only the database NOTIFY sent by the transaction wakes other processes).
  std::function<void(const std::string& request_id, domain::request_change)> request_changed;
  /// Executors for calls that reach a provider (retry of an UNKNOWN node
  /// asks `recover`); null: such calls answer 503.
  const domain::provider_registry* providers = nullptr;
};

/// Runs `body` with a pooled connection. A lost or unreachable database
/// answers 503 (and the broken connection is dropped, so the next call
/// reconnects); any other exception escapes to the caller.
template <class F> api::reply with_connection(db::connection_pool& pool, F&& body);
template <class F> api::reply with_connection(service_context& ctx, F&& body);

/// with_connection running `body(tx)` in one read-write transaction: body
/// commits (db::in_transaction); a refusal returned without a commit has
/// changed nothing.
template <class F> api::reply with_transaction(service_context& ctx, F&& body);

/// with_connection running `body(tx)` in one read-only transaction.
template <class F> api::reply with_read_transaction(service_context& ctx, F&& body);

} // namespace mg::services

#include "services/service_context_impl.hpp"
