// domain/recovery: what an executor.recover answer makes of the node
// (SPEC §1) — the mapping the node_recovery worker and the operator's
// retry of an UNKNOWN node share.
#include <boost/test/unit_test.hpp>

#include "domain/provider_answer.hpp"
#include "domain/recovery.hpp"

using namespace mg;
using domain::node_state;
using domain::recover_outcome;

namespace {

domain::recover_result answer(recover_outcome o, std::optional<node_state> next = std::nullopt) {
  domain::recover_result rr;
  rr.outcome = o;
  rr.result.next_state = next;
  return rr;
}

} // namespace

BOOST_AUTO_TEST_SUITE(recovery)

BOOST_AUTO_TEST_CASE(found_takes_the_answer_and_sends_live_attempts_back_to_the_observer) {
  for (auto s : {node_state::submitted, node_state::observing}) {
    auto d = domain::decide_recover(answer(recover_outcome::found, s), 2, "");
    BOOST_TEST((d.next_state == s));
    BOOST_TEST(d.take_answer);
    BOOST_TEST(d.observe_now);
    BOOST_TEST(!d.clear_claim);
  }
  auto done = domain::decide_recover(answer(recover_outcome::found, node_state::completed), 2, "");
  BOOST_TEST((done.next_state == node_state::completed));
  BOOST_TEST(done.take_answer);
  BOOST_TEST(!done.observe_now);
  // A found answer without a state settles UNKNOWN.
  auto bare = domain::decide_recover(answer(recover_outcome::found), 2, "");
  BOOST_TEST((bare.next_state == node_state::unknown));
}

BOOST_AUTO_TEST_CASE(fenced_readies_the_node_and_clears_its_claim) {
  auto d = domain::decide_recover(answer(recover_outcome::fenced), 3, "TIMEOUT");
  BOOST_TEST((d.next_state == node_state::ready));
  BOOST_TEST(!d.take_answer);
  BOOST_TEST(d.clear_claim);
  BOOST_TEST(d.error_code == "");
  BOOST_TEST(d.error_detail == "attempt 3 fenced by recovery");
}

BOOST_AUTO_TEST_CASE(still_unknown_keeps_the_error_code_or_marks_recovery_pending) {
  auto rr = answer(recover_outcome::still_unknown);
  rr.result.error_detail = "provider down";
  auto kept = domain::decide_recover(rr, 1, "SUBMIT_TIMEOUT");
  BOOST_TEST((kept.next_state == node_state::unknown));
  BOOST_TEST(!kept.take_answer);
  BOOST_TEST(!kept.clear_claim);
  BOOST_TEST(kept.error_code == "SUBMIT_TIMEOUT");
  BOOST_TEST(kept.error_detail == "provider down");
  BOOST_TEST(domain::decide_recover(rr, 1, "").error_code == "RECOVERY_PENDING");
}

BOOST_AUTO_TEST_CASE(a_protocol_violation_settles_unknown_with_the_violation_stored) {
  domain::recover_result rr;
  rr.outcome = recover_outcome::still_unknown;
  rr.result = domain::protocol_violation(domain::executor_step::recover, {}, "not JSON");
  auto d = domain::decide_recover(rr, 1, "");
  BOOST_TEST((d.next_state == node_state::unknown));
  BOOST_TEST(d.take_answer);
  BOOST_TEST(!d.clear_claim);
}

BOOST_AUTO_TEST_CASE(outcome_names) {
  BOOST_TEST(domain::recover_outcome_name(recover_outcome::found) == std::string("found"));
  BOOST_TEST(domain::recover_outcome_name(recover_outcome::fenced) == std::string("fenced"));
  BOOST_TEST(domain::recover_outcome_name(recover_outcome::still_unknown) ==
             std::string("still_unknown"));
}

BOOST_AUTO_TEST_SUITE_END()
