// POST /v3/movements: the body as the handler gets it (json::parse, then
// parse_create_body). Invariants: only 400/422 refusals; an accepted body
// holds exactly what the checks approved (the stored intent carries the
// checked amount, the callback URL passes its check, the hash is of the
// canonical body) and canonical JSON is a fixed point.
#include "domain/hash.hpp"
#include "domain/json.hpp"
#include "domain/movement_requests.hpp"
#include "tests/fuzz/fuzz_check.hpp"
#include "tests/fuzz/json_walk.hpp"

using namespace mg;

namespace {

void check(const json::value& body, bool allow_private) {
  auto r = domain::parse_create_body(body, allow_private);
  if (!r.ok()) {
    MG_FUZZ_CHECK(r.error.status == 400 || r.error.status == 422, "refusal is 400 or 422");
    MG_FUZZ_CHECK(!r.error.details.empty(), "a refusal names its fields");
    return;
  }
  const auto& b = *r.value;
  MG_FUZZ_CHECK(body.IsObject(), "only an object is accepted");
  MG_FUZZ_CHECK(!b.template_key.empty(), "template_key present");
  MG_FUZZ_CHECK(b.template_version >= 0, "template_version 0 (latest) or >= 1");
  MG_FUZZ_CHECK(domain::is_positive_decimal(b.amount), "amount is a positive decimal");
  MG_FUZZ_CHECK(domain::is_idempotency_key(b.idempotency_key), "idempotency key checked");
  MG_FUZZ_CHECK(b.callback_url.empty() ||
                    domain::callback_url_problem(b.callback_url, allow_private).empty(),
                "callback URL checked");
  MG_FUZZ_CHECK(b.body_hash == domain::sha256_hex(json::canonical(body)),
                "hash of the canonical body");
  // What is stored is what was checked: the intent text read back carries
  // the same amount and is an object.
  auto intent = json::parse(b.intent);
  MG_FUZZ_CHECK(intent && intent->IsObject(), "stored intent is a JSON object");
  MG_FUZZ_CHECK(json::get_string(*intent, "amount") == b.amount,
                "stored amount is the checked one");
  auto params = json::parse(b.input_params);
  MG_FUZZ_CHECK(params && params->IsObject(), "stored input_params is a JSON object");
  // Accepting does not depend on how the same JSON is written (repeated
  // member names are the duplicate-key bypass of SPEC §5, refused by its
  // reader: with them the first "amount" found depends on the order).
  if (fuzz::has_duplicate_names(body))
    return;
  auto again = json::parse(json::canonical(body));
  MG_FUZZ_CHECK(again.has_value(), "canonical form parses");
  auto r2 = domain::parse_create_body(*again, allow_private);
  MG_FUZZ_CHECK(r2.ok() && r2.value->amount == b.amount, "the canonical body is accepted alike");
  if (!fuzz::has_double(body))
    MG_FUZZ_CHECK(r2.value->body_hash == b.body_hash, "the canonical body hashes alike");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto doc = json::parse(fuzz::bytes(data, size));
  if (!doc)
    return 0;
  // canonical is a fixed point and dump round-trips.
  const std::string c = json::canonical(*doc);
  auto re = json::parse(c);
  MG_FUZZ_CHECK(re.has_value(), "canonical output parses");
  auto dumped = json::parse(json::dump(*doc));
  MG_FUZZ_CHECK(dumped.has_value(), "dump output parses");
  if (!fuzz::has_double(*doc) && !fuzz::has_duplicate_names(*doc)) {
    MG_FUZZ_CHECK(json::canonical(*re) == c, "canonical is idempotent");
    MG_FUZZ_CHECK(json::canonical(*dumped) == c, "dump round-trips");
  }
  check(*doc, false);
  check(*doc, true);
  return 0;
}
