// The CCTP burn caller-alignment check on the real database (reference
// dispatch pipeline: validate_cctp_burn_caller_alignment() before
// preflight): a cctp_burn is sent only by its signer's enrolled identity,
// and a destination_caller must be the enrolled identity of the plan's
// cctp_mint signer; otherwise the node fails CCTP_CALLER_MISMATCH before any
// executor call.
#include <boost/test/unit_test.hpp>

#include <string>

#include "actors/workers/node_dispatcher.hpp"
#include "actors/workers/node_observer.hpp"
#include "persistence/db.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;
using namespace mg::test;

namespace {

constexpr const char* other_address = "0x1111111111111111111111111111111111111111";
constexpr const char* mint_address = "0x2222222222222222222222222222222222222222";

/// A burn signed by `signer` (config `config`), then a mint signed by the
/// `mint` signer.
std::string burn_then_mint(const std::string& key, const std::string& config,
                           const std::string& signer = "sim") {
  return R"({"template_key": ")" + key + R"(", "version": 1, "nodes": [
    {"node_key": "burn", "action_type": "cctp_burn", "executor_key": "sim",
     "side_effect": true, "signing_required": true, "signer_key": ")" +
         signer + R"(", "config": )" + config + R"(},
    {"node_key": "mint", "action_type": "cctp_mint", "executor_key": "sim",
     "signing_required": true, "signer_key": "mint"}],
   "edges": [["burn", "mint"]]})";
}

struct cctp_fixture : reference_db_fixture {
  cctp_fixture() {
    // A second signer for the mint side (its own key, enrolled separately).
    ctx->providers.signers["mint"] = std::make_shared<executors::sim_signer>();
  }
  void enrol(const std::string& signer, const std::string& address) {
    exec("INSERT INTO signer_identities VALUES ('" + signer + "', '" + address +
         "') ON CONFLICT (signer_key) DO UPDATE SET expected_signer_address = '" + address + "'");
  }
  /// Dispatches the burn; returns its node id.
  std::string dispatch_burn(const std::string& request_id) {
    BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
    return node_id(*this, request_id, "burn");
  }
  void expect_refused(const std::string& request_id, const std::string& node,
                      const std::string& detail_part) {
    BOOST_TEST(node_col(*this, node, "node_state") == "FAILED");
    BOOST_TEST(node_col(*this, node, "error_code") == "CCTP_CALLER_MISMATCH");
    BOOST_TEST(node_col(*this, node, "error_detail").find(detail_part) != std::string::npos,
               node_col(*this, node, "error_detail"));
    BOOST_TEST(node_col(*this, node, "attempt_no") == "0");
    // No executor call: nothing prepared, signed or submitted.
    BOOST_TEST(count("SELECT count(*) FROM sim_ledger") == 0);
    BOOST_TEST(count("SELECT count(*) FROM node_artifacts WHERE node_id = '" + node + "'") == 0);
    reconcile(request_id);
    BOOST_TEST(snapshot(request_id).request_state == domain::request_state::failed);
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(cctp_caller)

BOOST_FIXTURE_TEST_CASE(a_burn_whose_signer_is_not_enrolled_fails_before_any_call, cctp_fixture) {
  add_template(burn_then_mint("burn", "{}"));
  auto id = create_and_approve("burn");
  expect_refused(id, dispatch_burn(id), "no enrolled identity");
}

BOOST_FIXTURE_TEST_CASE(a_burn_whose_signer_is_someone_else_fails_before_any_call, cctp_fixture) {
  enrol("sim", other_address); // the sim signer is 0x5157…, not this
  add_template(burn_then_mint("burn", "{}"));
  auto id = create_and_approve("burn");
  expect_refused(id, dispatch_burn(id), "not by " + std::string(other_address));
}

BOOST_FIXTURE_TEST_CASE(a_burn_without_a_signer_fails_before_any_call, cctp_fixture) {
  add_template(R"({"template_key": "unsigned", "version": 1, "nodes": [
    {"node_key": "burn", "action_type": "cctp_burn", "executor_key": "sim"}]})");
  auto id = create_and_approve("unsigned");
  expect_refused(id, dispatch_burn(id), "names no signer");
}

BOOST_FIXTURE_TEST_CASE(an_aligned_burn_completes, cctp_fixture) {
  enrol("sim", "0x5157000000000000000000000000000000005157"); // sim_signer::address
  enrol("mint", mint_address);
  add_template(burn_then_mint("burn", "{}"));
  auto id = create_and_approve("burn");
  auto burn = dispatch_burn(id);
  BOOST_TEST(node_col(*this, burn, "node_state") == "SUBMITTED");
  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, burn, "node_state") == "COMPLETED");
}

BOOST_FIXTURE_TEST_CASE(enrolment_compares_addresses_whatever_their_case, cctp_fixture) {
  enrol("sim", "0x5157000000000000000000000000000000005157");
  add_template(burn_then_mint(
      "burn", R"({"destination_caller": "0xabcdefabcdefabcdefabcdefabcdefabcdefabcd"})"));
  enrol("mint", "0xABCDEFABCDEFABCDEFABCDEFABCDEFABCDEFABCD");
  auto id = create_and_approve("burn");
  BOOST_TEST(node_col(*this, dispatch_burn(id), "node_state") == "SUBMITTED");
}

BOOST_FIXTURE_TEST_CASE(a_destination_caller_must_be_the_mint_signers_identity, cctp_fixture) {
  enrol("sim", "0x5157000000000000000000000000000000005157");
  enrol("mint", mint_address);
  add_template(burn_then_mint("to_other", R"({"destination_caller": "$ref:input.caller"})"));
  // Someone else would be allowed to mint the burned funds.
  auto wrong = create("to_other", std::string(R"({"caller": ")") + other_address + "\"}");
  approve(wrong);
  expect_refused(wrong, dispatch_burn(wrong), "destination_caller");
}

BOOST_FIXTURE_TEST_CASE(a_destination_caller_needs_an_enrolled_mint_signer, cctp_fixture) {
  enrol("sim", "0x5157000000000000000000000000000000005157");
  add_template(
      burn_then_mint("burn", std::string(R"({"destination_caller": ")") + mint_address + "\"}"));
  auto id = create_and_approve("burn");
  expect_refused(id, dispatch_burn(id), "signer 'mint' of the mint has no enrolled identity");
}

BOOST_FIXTURE_TEST_CASE(a_destination_caller_matching_the_mint_signer_completes, cctp_fixture) {
  enrol("sim", "0x5157000000000000000000000000000000005157");
  enrol("mint", mint_address);
  // The bytes32 form CCTP's destinationCaller takes.
  add_template(burn_then_mint(
      "burn",
      R"({"destination_caller": "0x0000000000000000000000002222222222222222222222222222222222222222"})"));
  auto id = create_and_approve("burn");
  auto burn = dispatch_burn(id);
  BOOST_TEST(node_col(*this, burn, "node_state") == "SUBMITTED");
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE node_id = '" + burn + "'") == 1);
}

BOOST_AUTO_TEST_SUITE_END()
