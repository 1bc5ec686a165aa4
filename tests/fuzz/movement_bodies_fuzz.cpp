// The other movement call bodies (approve, reject/cancel, resume, retry,
// manual complete), parsed as the handlers get them. Invariants: only
// 400/422; an accepted body has only known fields and the values given.
#include "domain/json.hpp"
#include "domain/movement_requests.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mg;

namespace {

template <class T> void refusal_ok(const domain::checked<T>& r) {
  if (!r.ok())
    MG_FUZZ_CHECK(r.error.status == 400 || r.error.status == 422, "refusal is 400 or 422");
}

bool only_members(const json::value& v, std::initializer_list<const char*> known) {
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    bool found = false;
    for (const char* k : known)
      found = found || std::string_view(it->name.GetString(), it->name.GetStringLength()) == k;
    if (!found)
      return false;
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto doc = json::parse(fuzz::bytes(data, size));
  if (!doc)
    return 0;
  const json::value& body = *doc;

  auto approve = domain::parse_approve_body(body);
  refusal_ok(approve);
  if (approve.ok()) {
    MG_FUZZ_CHECK(body.IsObject() && only_members(body, {"approver_id"}), "approve: known fields");
    MG_FUZZ_CHECK(approve.value->approver_id == json::get_string(body, "approver_id"),
                  "approve: approver_id as given");
  }
  auto reason = domain::parse_reason_body(body);
  refusal_ok(reason);
  if (reason.ok())
    MG_FUZZ_CHECK(body.IsObject() && only_members(body, {"reason"}), "reason: known fields");
  auto resume = domain::parse_resume_body(body);
  refusal_ok(resume);
  if (resume.ok())
    MG_FUZZ_CHECK(body.IsObject() && body.MemberCount() == 0, "resume: {} only");
  auto retry = domain::parse_retry_body(body);
  refusal_ok(retry);
  if (retry.ok())
    MG_FUZZ_CHECK(!retry.value->node_key.empty() && only_members(body, {"node_key"}),
                  "retry: a node_key and nothing else");
  auto complete = domain::parse_complete_body(body);
  refusal_ok(complete);
  if (complete.ok()) {
    auto refs = json::parse(complete.value->provider_refs);
    MG_FUZZ_CHECK(refs && refs->IsObject(), "complete: provider_refs is an object");
  }
  return 0;
}
