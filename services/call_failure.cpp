#include "services/call_failure.hpp"

#include "persistence/db.hpp"

namespace mg::services {

call_failure classify_failure(const std::exception& e) {
  if (db::is_refused_value(e))
    return call_failure::refused_value;
  if (db::is_connection_error(e))
    return call_failure::database_away;
  return call_failure::fault;
}

} // namespace mg::services
