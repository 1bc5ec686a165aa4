#pragma once
// Templates, template proposals, executors and signers (SPEC §3, §4, §5).
// Same conventions as movement_service: 400 → 404 → 422 → 409, audit row
// in the transaction of every successful mutation, 503 when the database is
// down.
#include <string>

#include "services/movement_service.hpp"

namespace mg::services {

class catalog_service {
public:
  explicit catalog_service(service_context& ctx) : ctx_(ctx) {}

  /// The shared context, for services the route table builds beside it.

  /// GET /v3/templates?limit=&cursor= — latest version of each key.
  reply list_templates(const caller& who, const list_query& q);
  /// GET /v3/templates/{key} — every version of the key, newest first.
  reply get_template(const caller& who, const std::string& key);

  /// POST /v3/template-proposals `{template_key, plan}` — 201; compile
  /// errors → 422 listing every error.
  reply propose_template(const caller& who, const json::value& body);
  /// POST /v3/template-proposals/{id}/approve — compiles again and
  /// publishes the next version of the key; the proposer cannot approve.
  reply approve_proposal(const caller& who, const std::string& id, const json::value& body);
  /// POST /v3/template-proposals/{id}/reject `{reason?}`
  reply reject_proposal(const caller& who, const std::string& id, const json::value& body);

  /// GET /v3/executors — health per executor key and process.
  reply list_executors(const caller& who);
  /// GET /v3/signers — health, observed and expected identity, posture
  /// (match|mismatch|unenrolled|orphan) derived on read.
  reply list_signers(const caller& who);
  /// PUT /v3/signers/{signer_key}/expected-identity `{address}`.
  reply put_expected_identity(const caller& who, const std::string& signer_key,
                              const json::value& body);

private:
  service_context& ctx_;
};

} // namespace mg::services
