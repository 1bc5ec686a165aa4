// The provider-JSON converters (domain/provider_json): what a sibling's
// remote executor or signer answers over the cluster. The first byte picks
// the converter, the rest is the JSON. Invariants: a malformed answer
// throws executor_error and nothing else; an accepted one serialises to
// JSON that reads back to the same serialisation (a fixed point).
#include "domain/provider_json.hpp"
#include "tests/fuzz/fuzz_check.hpp"
#include "tests/fuzz/json_walk.hpp"

using namespace mg::domain;

namespace {

template <class Read, class Write>
void fixed_point(const std::string& text, Read read, Write write) {
  std::string once;
  try {
    once = write(read(text));
  } catch (const executor_error&) {
    return;
  }
  std::string twice;
  try {
    twice = write(read(once));
  } catch (const executor_error& e) {
    std::fprintf(stderr, "re-reading %s failed: %s\n", once.c_str(), e.what());
    MG_FUZZ_CHECK(false, "own output reads back");
  }
  auto doc = mg::json::parse(text);
  MG_FUZZ_CHECK(once == twice || (doc && mg::fuzz::has_double(*doc)),
                "serialisation is a fixed point");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1)
    return 0;
  const std::string text(mg::fuzz::bytes(data + 1, size - 1));
  switch (data[0] % 10) {
  case 0:
    fixed_point(text, execution_context_from_json,
                [](const execution_context& c) { return to_json(c); });
    break;
  case 1:
    fixed_point(text, step_result_from_json, [](const step_result& r) { return to_json(r); });
    break;
  case 2:
    fixed_point(text, optional_step_result_from_json,
                [](const std::optional<step_result>& r) { return to_json(r); });
    break;
  case 3:
    fixed_point(text, optional_prepared_action_from_json,
                [](const std::optional<prepared_action>& a) { return to_json(a); });
    break;
  case 4:
    fixed_point(text, prepared_action_from_json,
                [](const prepared_action& a) { return to_json(a); });
    break;
  case 5:
    fixed_point(text, recover_result_from_json, [](const recover_result& r) { return to_json(r); });
    break;
  case 6:
    fixed_point(text, health_result_from_json, [](const health_result& h) { return to_json(h); });
    break;
  case 7:
    fixed_point(text, sign_request_from_json, [](const sign_request& r) { return to_json(r); });
    break;
  case 8:
    fixed_point(text, optional_sign_result_from_json, [](const std::optional<sign_result>& s) {
      return to_json(s ? &*s : static_cast<const sign_result*>(nullptr));
    });
    break;
  case 9:
    fixed_point(text, sign_result_from_json, [](const sign_result& s) { return to_json(s); });
    break;
  }
  return 0;
}
