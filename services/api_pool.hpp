#pragma once
// The connection pool every front door's service calls borrow from.
#include <memory>

#include "config/settings.hpp"
#include "persistence/connection_pool.hpp"

namespace mg::services {

/// The API's own pool on MG_DATABASE_URL, under this process's API
/// application_name (so its dispatch NOTIFYs are recognised as its own).
std::unique_ptr<db::connection_pool> open_api_pool(const config::settings& settings);

} // namespace mg::services
