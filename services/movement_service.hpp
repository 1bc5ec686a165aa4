#pragma once
// Movement calls of SPEC §5, shared by every front door (HTTP /v3, cluster
// sessions). Each call checks in SPEC §5's order what is left after the
// front door's checks (413, auth, scope, 429, "body is a JSON object"):
// 400 (fields and types) → 404 (id) → 422 → 409, with four-eyes 403 once
// the request is found. A refused call changes nothing; a successful
// mutating call writes its audit_outbox row in its own transaction and
// then calls ctx.request_changed.
#include <map>
#include <string>

#include "domain/api.hpp"
#include "domain/json.hpp"
#include "services/service_context.hpp"

namespace mg::services {

struct list_query {
  std::string state;  // "" = any; else a request_state (unknown → 400)
  std::string limit;  // "" = 50; 1..200 (else 400)
  std::string cursor; // "" = first page; opaque (malformed → 400)
};

class movement_service {
public:
  explicit movement_service(service_context& ctx) : ctx_(ctx) {}

  /// POST /v3/movements — 201 new, 200 deduplicated, 409 same idempotency
  /// key with another body. `body` is a JSON object; `members`, when the
  /// body came through json::read, holds each top-level member as the
  /// reader serialised it (numbers as sent): `intent` and `input_params`
  /// are stored from there, otherwise dumped from `body`.
  reply create(const caller& who, const json::value& body,
               const std::map<std::string, std::string>& members = {});
  /// GET /v3/movements/{id}
  reply get(const caller& who, const std::string& id);
  /// GET /v3/movements?state=&limit=&cursor=
  reply list(const caller& who, const list_query& q);
  /// GET /v3/movements/{id}/events?limit=&cursor= — events and audit rows.
  reply events(const caller& who, const std::string& id, const list_query& q);

  // Operator transitions (SPEC §5 table); `body` is a JSON object ({} for
  // an empty body).
  reply approve(const caller& who, const std::string& id, const json::value& body);
  reply reject(const caller& who, const std::string& id, const json::value& body);
  reply cancel(const caller& who, const std::string& id, const json::value& body);
  reply resume(const caller& who, const std::string& id, const json::value& body);
  reply retry(const caller& who, const std::string& id, const json::value& body);
  reply complete(const caller& who, const std::string& id, const std::string& node_key,
                 const json::value& body);

private:
  service_context& ctx_;
};

} // namespace mg::services
