#pragma once
// The /v3 route table of SPEC §5: each route's method, path, scope and the
// service call behind it.
#include <vector>

#include "actors/api/catalog_service.hpp"
#include "actors/api/movement_service.hpp"
#include "http/api_server.hpp"

namespace mg::http {

std::vector<route> v3_routes(api::movement_service& movements, api::catalog_service& catalog);

} // namespace mg::http
