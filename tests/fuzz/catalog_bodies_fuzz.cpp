// Catalog call bodies (template proposal, expected signer identity) and
// plan_with_version on an accepted proposal's plan. Invariants: only
// 400/422; an accepted plan is an object whose version is replaced.
#include "domain/catalog_requests.hpp"
#include "domain/json.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto doc = json::parse(fuzz::bytes(data, size));
  if (!doc)
    return 0;
  auto proposal = domain::parse_proposal_body(*doc);
  if (!proposal.ok()) {
    MG_FUZZ_CHECK(proposal.error.status == 400 || proposal.error.status == 422, "400 or 422");
  } else {
    auto plan = json::parse(proposal.value->plan);
    MG_FUZZ_CHECK(plan && plan->IsObject(), "plan is an object");
    MG_FUZZ_CHECK(!proposal.value->template_key.empty(), "template_key present");
    for (int version : {1, 7, 2147483647}) {
      auto versioned = json::parse(domain::plan_with_version(proposal.value->plan, version));
      MG_FUZZ_CHECK(versioned && versioned->IsObject(), "versioned plan is an object");
      auto it = versioned->FindMember("version");
      MG_FUZZ_CHECK(it != versioned->MemberEnd() && it->value.IsInt() &&
                        it->value.GetInt() == version,
                    "version replaced");
    }
  }
  auto identity = domain::parse_identity_body(*doc);
  if (!identity.ok())
    MG_FUZZ_CHECK(identity.error.status == 400 || identity.error.status == 422, "400 or 422");
  else
    MG_FUZZ_CHECK(identity.value->address == json::get_string(*doc, "address"), "address as given");
  return 0;
}
