#include "services/api_pool.hpp"

#include "persistence/db.hpp"

namespace mg::services {

namespace {

/// Enough for the server's worker threads to rarely wait, few enough to
/// leave PostgreSQL's 100 to the workers.
constexpr size_t api_pool_size = 8;

} // namespace

std::unique_ptr<db::connection_pool> open_api_pool(const config::settings& settings) {
  return std::make_unique<db::connection_pool>(
      db::with_application_name(settings.database_url, db::api_application_name()), api_pool_size);
}

} // namespace mg::services
