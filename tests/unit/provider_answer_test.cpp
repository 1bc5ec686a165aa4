// What the engine accepts from a provider (SPEC §4 "an executor's answer is
// input, too"): the per-step answer table, the protocol-error outcome, the
// converters' refusal of malformed, oversized and hostile documents, the
// text a column takes, and the CCTP caller-alignment rule.
#include "domain/provider_answer.hpp"

#include <boost/test/unit_test.hpp>

#include <string>

#include "domain/cctp_caller.hpp"
#include "domain/provider_json.hpp"
#include "domain/reconcile.hpp"
#include "domain/timing.hpp"

using namespace mg::domain;
using N = node_state;
using S = executor_step;

BOOST_AUTO_TEST_SUITE(provider_answer)

BOOST_AUTO_TEST_CASE(protocol_error_answer_table) {
  for (auto s : {N::failed, N::completed, N::skipped})
    BOOST_TEST(answer_allowed(S::preflight, s), to_string(s));
  for (auto s :
       {N::ready, N::blocked, N::preparing, N::submitting, N::submitted, N::unknown, N::cancelled})
    BOOST_TEST(!answer_allowed(S::preflight, s), to_string(s));
  for (auto step : {S::submit, S::observe, S::recover}) {
    for (auto s : {N::submitted, N::observing, N::completed, N::failed, N::unknown})
      BOOST_TEST(answer_allowed(step, s), to_string(step) << " " << to_string(s));
    for (auto s : {N::ready, N::blocked, N::preparing, N::awaiting_signature, N::submitting,
                   N::skipped, N::cancelled})
      BOOST_TEST(!answer_allowed(step, s), to_string(step) << " " << to_string(s));
  }
  for (auto step : {S::preflight, S::prepare, S::sign})
    BOOST_TEST((protocol_error_state(step) == N::failed));
  for (auto step : {S::submit, S::observe, S::recover})
    BOOST_TEST((protocol_error_state(step) == N::unknown));
}

BOOST_AUTO_TEST_CASE(protocol_error_replaces_a_bad_answer_keeping_what_is_well_formed) {
  step_result r;
  r.next_state = N::ready;
  r.provider_state = "WEIRD";
  r.provider_refs = R"({"tx":"0x1"})";
  r.provider_ref_id = "p-1";
  auto c = checked_answer(S::observe, r);
  BOOST_TEST((c.next_state == N::unknown));
  BOOST_TEST(c.error_code == "PROVIDER_PROTOCOL_ERROR");
  BOOST_TEST(c.error_detail.find("READY") != std::string::npos);
  BOOST_TEST(c.provider_state == "WEIRD");
  BOOST_TEST(c.provider_refs == r.provider_refs);
  BOOST_TEST(c.provider_ref_id == "p-1");

  r.next_state = N::completed;
  r.provider_refs = "[1]";
  c = checked_answer(S::submit, r);
  BOOST_TEST((c.next_state == N::unknown));
  BOOST_TEST(c.provider_refs == "{}"); // not an object: dropped
  r.provider_refs = "{}";
  r.generated_artifacts = R"({"a":1})";
  BOOST_TEST(!answer_problem(S::observe, r).empty());
  r.generated_artifacts = R"([{"a":1}])";
  BOOST_TEST(answer_problem(S::observe, r).empty());
  BOOST_TEST((checked_answer(S::observe, r).next_state == N::completed));
  step_result empty_text;
  empty_text.next_state = N::completed;
  empty_text.provider_refs.clear();
  empty_text.generated_artifacts.clear();
  auto normalised = checked_answer(S::observe, empty_text);
  BOOST_TEST((normalised.next_state == N::completed));
  BOOST_TEST(normalised.provider_refs == "{}");
  BOOST_TEST(normalised.generated_artifacts == "[]");
  // No next_state is each step's own business, not a protocol error.
  r.next_state.reset();
  BOOST_TEST(answer_problem(S::observe, r).empty());
}

BOOST_AUTO_TEST_CASE(converters_refuse_hostile_documents_as_protocol_errors) {
  auto refused = [](const std::string& text) {
    try {
      step_result_from_json(text);
      return false;
    } catch (const provider_protocol_error&) {
      return true;
    }
  };
  BOOST_TEST(!refused(R"({"next_state":"COMPLETED"})"));
  BOOST_TEST(refused("not json"));
  BOOST_TEST(refused(R"({"next_state":"NOPE"})"));
  BOOST_TEST(refused(R"({"next_state":"COMPLETED","next_state":"FAILED"})"));
  BOOST_TEST(refused(R"({"provider_state":"a\u0000b"})"));
  BOOST_TEST(refused(R"({"provider_state":"\udc00"})"));  // lone low surrogate
  BOOST_TEST(refused(R"({"provider_state":"\ud800x"})")); // lone high surrogate
  BOOST_TEST(refused("{\"provider_state\":\"\xff\"}"));   // not UTF-8
  BOOST_TEST(refused(R"({"provider_refs":[1]})"));
  BOOST_TEST(refused(R"({"generated_artifacts":{}})"));
  BOOST_TEST(refused(R"({"k":{"a":1,"a":2}})")); // repeated deeper down
  std::string deep = R"({"provider_refs":{"d":)";
  for (int i = 0; i < 70; ++i)
    deep += "[";
  for (int i = 0; i < 70; ++i)
    deep += "]";
  BOOST_TEST(refused(deep + "}}"));
  // Far deeper than any stack would take recursively: refused, no crash.
  std::string abyss = R"({"a":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
  BOOST_TEST(refused(abyss));
  std::string big = R"({"provider_state":")" + std::string(max_answer_bytes, 'x') + R"("})";
  BOOST_TEST(refused(big));
  BOOST_CHECK_THROW(recover_result_from_json(R"({"outcome":"found","result":[]})"),
                    provider_protocol_error);
  BOOST_CHECK_THROW(optional_prepared_action_from_json(R"({"payload":7})"),
                    provider_protocol_error);
  BOOST_TEST(step_result_from_json(R"({"provider_refs":null})").provider_refs == "{}");
}

BOOST_AUTO_TEST_CASE(storable_text_is_valid_utf8_without_nul) {
  BOOST_TEST(storable_text("plain") == "plain");
  BOOST_TEST(storable_text("caf\xc3\xa9") == "caf\xc3\xa9");
  BOOST_TEST(storable_text(std::string("a\0b", 3)) == "a\xEF\xBF\xBD"
                                                      "b");
  BOOST_TEST(storable_text("\xff") == "\xEF\xBF\xBD");
  BOOST_TEST(storable_text("\xed\xb0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"); // surrogate
  BOOST_TEST(storable_text("\xc0\xaf") == "\xEF\xBF\xBD\xEF\xBF\xBD");                 // overlong
  BOOST_TEST(storable_text("\xe2\x82") == "\xEF\xBF\xBD\xEF\xBF\xBD");                 // cut short
  BOOST_TEST(storable_text(std::string(5000, 'x')).size() == 4096u);
  BOOST_TEST(storable_text("ab\xc3\xa9", 3) == "ab"); // never half a character
}

BOOST_AUTO_TEST_CASE(a_protocol_error_unknown_is_settled_at_once) {
  node_view n{"n", N::unknown, "PROVIDER_PROTOCOL_ERROR", 0};
  BOOST_TEST(is_settled_unknown(n, 900));
  BOOST_TEST(!is_in_flight(n, 900));
  BOOST_TEST(settles_at_once("OBSERVATION_TIMEOUT"));
  BOOST_TEST(!settles_at_once("RECOVERY_PENDING"));
  BOOST_TEST(!is_settled_unknown(node_view{"n", N::unknown, "SUBMIT_ERROR", 0}, 900));
}

BOOST_AUTO_TEST_CASE(prepare_retry_delay_doubles_from_one_to_sixty_seconds) {
  const double expected[] = {1, 2, 4, 8, 16, 32, 60, 60, 60};
  for (int i = 0; i < 9; ++i)
    BOOST_TEST(prepare_retry_delay(i + 1) == expected[i]);
}

BOOST_AUTO_TEST_CASE(cctp_burn_caller_alignment) {
  const std::string sim = "0x5157000000000000000000000000000000005157";
  const std::string mint = "0xabcdefabcdefabcdefabcdefabcdefabcdefabcd";
  cctp_burn_facts f;
  f.burn = {"sim", sim, sim};
  BOOST_TEST(cctp_burn_caller_problem(f).empty());
  auto g = f;
  g.burn.expected.reset();
  BOOST_TEST(cctp_burn_caller_problem(g).find("no enrolled identity") != std::string::npos);
  g = f;
  g.burn.reported = mint;
  BOOST_TEST(!cctp_burn_caller_problem(g).empty());
  g = f;
  g.burn.reported.reset(); // the signer is not there to ask
  BOOST_TEST(!cctp_burn_caller_problem(g).empty());
  g = f;
  g.burn.signer_key.clear();
  BOOST_TEST(!cctp_burn_caller_problem(g).empty());
  g = f;
  g.burn.expected = "0x5157000000000000000000000000000000005157 "; // not an address
  BOOST_TEST(!cctp_burn_caller_problem(g).empty());

  // destination_caller: must be the mint signer's enrolled identity.
  f.node_config_json = R"({"destination_caller": "0xABCDEFABCDEFABCDEFABCDEFABCDEFABCDEFABCD"})";
  BOOST_TEST(!cctp_burn_caller_problem(f).empty()); // no mint node in the plan
  f.plan_has_mint = true;
  f.mint = {"m", std::nullopt, std::nullopt};
  BOOST_TEST(cctp_burn_caller_problem(f).find("no enrolled identity") != std::string::npos);
  f.mint.expected = mint;
  BOOST_TEST(cctp_burn_caller_problem(f).empty());
  f.node_config_json =
      R"({"destination_caller": "0x000000000000000000000000abcdefabcdefabcdefabcdefabcdefabcdefabcd"})";
  BOOST_TEST(cctp_burn_caller_problem(f).empty()); // bytes32 form
  f.node_config_json =
      R"({"destination_caller": "0x100000000000000000000000abcdefabcdefabcdefabcdefabcdefabcdefabcd"})";
  BOOST_TEST(!cctp_burn_caller_problem(f).empty()); // not a padded address
  f.node_config_json = R"({"destination_caller": 5})";
  BOOST_TEST(!cctp_burn_caller_problem(f).empty());
  f.node_config_json = R"({"destination_caller": ""})";
  BOOST_TEST(cctp_burn_caller_problem(f).empty()); // unset
}

BOOST_AUTO_TEST_SUITE_END()
