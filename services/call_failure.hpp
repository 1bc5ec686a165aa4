#pragma once
// What an exception escaping a service call means for the caller's answer,
// so the front doors (HTTP API, admin listener, cluster door) answer the
// same way without knowing the database library.
#include <exception>

namespace mg::services {

enum class call_failure {
  /// The database refused a value the request carried (SQLSTATE class 22):
  /// the request's fault, a 400.
  refused_value,
  /// No primary reachable (a failover under way): the database is away,
  /// not the request at fault; a 503 the client retries.
  database_away,
  /// Anything else: the server's fault.
  fault,
};

call_failure classify_failure(const std::exception& e);

} // namespace mg::services
