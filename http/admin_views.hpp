#pragma once
// The admin listener's read routes behind the inspection page (SPEC §5),
// all bearer-token protected:
//   GET /admin/movements?state=&template_key=&created_from=&created_to=&limit=&cursor=
//       keyset list, newest first ({"items", "next_cursor"}; created_from
//       inclusive, created_to exclusive, ISO 8601 with a zone; unknown or
//       repeated parameters → 400)
//   GET /admin/movements/{id}   the movement, its nodes with artifacts, the
//       DAG (nodes + edges of its template version) and its events (404 for
//       an unknown or malformed id)
//   GET /admin/cluster          cluster_nodes rows (may be empty)
// A lost database answers 503.
#include <vector>

#include "http/admin_server.hpp"
#include "services/service_context.hpp"

namespace mg::http {

std::vector<admin_route> admin_view_routes(services::service_context& ctx);

} // namespace mg::http
