#pragma once
// The reads behind the admin inspection page (SPEC §5 admin listener): the
// movements list, one movement with everything an operator looks at, and
// the cluster nodes. Bodies are the JSON PostgreSQL rendered; a lost
// database answers 503. The front door checks the parameters first.
#include <optional>
#include <string>

#include "domain/movement_requests.hpp"
#include "persistence/admin_view_store.hpp"
#include "services/service_context.hpp"

namespace mg::services {

/// The list's checked parameters.
struct movement_filter {
  std::string state;        // "" = any; else a request_state
  std::string template_key; // "" = any
  db::created_range created;
  int limit = 50;
  std::optional<domain::list_cursor> cursor;
};

/// {"items", "next_cursor"}, newest first; 400 when the created range is
/// shaped like a time but is not one ("2030-13-45T…").
reply admin_movements(service_context& ctx, const movement_filter& f);

/// The movement with its nodes, DAG and events; 404 when there is none.
reply admin_movement(service_context& ctx, const std::string& id);

/// The cluster_nodes rows as a JSON array (may be empty).
reply cluster_nodes(service_context& ctx);

} // namespace mg::services
