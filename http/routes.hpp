#pragma once
// The /v3 route table of SPEC §5: each route's method, path, scope and the
// service call behind it.
#include <vector>

#include "http/api_server.hpp"
#include "services/balance_service.hpp"
#include "services/catalog_service.hpp"
#include "services/movement_service.hpp"

namespace mg::http {

std::vector<route> v3_routes(services::movement_service& movements,
                             services::catalog_service& catalog,
                             services::balance_service& balances);

} // namespace mg::http
