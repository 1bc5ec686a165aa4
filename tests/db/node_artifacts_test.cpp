// The node_artifacts rows every provider answer leaves (reference: submit,
// observe and recover each "save proof artifact, save generated_artifacts"):
// one proof with the same fields on every path — next_state,
// provider_state, provider_refs, provider_ref_id, error_code — and one
// `generated` row per element of the answer's generated_artifacts.
#include <boost/test/unit_test.hpp>

#include <string>

#include "actors/workers/node_dispatcher.hpp"
#include "actors/workers/node_observer.hpp"
#include "actors/workers/node_recovery.hpp"
#include "persistence/db.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;
using namespace mg::test;

namespace {

std::string sim_template(const std::string& key, const std::string& sim) {
  return one_node(key, "chain_transfer", R"("config": {"sim": )" + sim + "}");
}

/// One field of the node's `kind` artifact of attempt 1, as text.
std::string proof_field(db_fixture& f, const std::string& node, const std::string& kind,
                        const std::string& path) {
  return f.scalar("SELECT payload #>> '{" + path + "}' FROM node_artifacts WHERE node_id = '" +
                  node + "' AND attempt_no = 1 AND kind = '" + kind + "'");
}

/// The generated artifacts of attempt 1, as a JSON array of their payloads.
std::string generated(db_fixture& f, const std::string& node) {
  return f.scalar("SELECT COALESCE(jsonb_agg(payload ORDER BY payload::text), '[]')::text"
                  " FROM node_artifacts WHERE node_id = '" +
                  node + "' AND attempt_no = 1 AND kind = 'generated'");
}

/// Whether the node's `kind` proof of attempt 1 carries an answered_at of
/// the last minute (the engine's clock, not a provider's claim).
bool answered_within_the_minute(db_fixture& f, const std::string& node, const std::string& kind) {
  return f.scalar("SELECT (payload->>'answered_at')::timestamptz"
                  " BETWEEN now() - interval '1 minute' AND clock_timestamp()"
                  " FROM node_artifacts WHERE node_id = '" +
                  node + "' AND attempt_no = 1 AND kind = '" + kind + "'") == "t";
}

} // namespace

BOOST_AUTO_TEST_SUITE(node_artifacts)

// The bench's hop starts when the executor answered: every proof records
// when the engine's call returned, whatever the provider wrote.
BOOST_FIXTURE_TEST_CASE(every_proof_records_when_the_engine_got_its_answer,
                        test::reference_db_fixture) {
  const std::string forged = R"("answered_at": "1999-01-01T00:00:00Z")";
  add_template(sim_template(
      "t", R"({"answer": {"submit": {"next_state": "SUBMITTED", "retry_after_seconds": 0, )" +
               forged + R"(}, "observe": {"next_state": "COMPLETED", )" + forged + "}}}"));
  add_template(sim_template("r", R"({"unknown_at": "submit", "answer": {"recover":
      {"outcome": "found", "result": {"next_state": "COMPLETED", )" +
                                     forged + "}}}}"));
  auto observed = node_id(*this, create_and_approve("t"));
  auto recovered = node_id(*this, create_and_approve("r"));
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 1);
  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 1);
  BOOST_REQUIRE(node_col(*this, observed, "node_state") == "COMPLETED");
  BOOST_REQUIRE(node_col(*this, recovered, "node_state") == "COMPLETED");
  BOOST_TEST(answered_within_the_minute(*this, observed, "submit_proof"));
  BOOST_TEST(answered_within_the_minute(*this, observed, "observe_proof"));
  BOOST_TEST(answered_within_the_minute(*this, recovered, "submit_proof"));
  BOOST_TEST(answered_within_the_minute(*this, recovered, "recover_proof"));
}

BOOST_FIXTURE_TEST_CASE(submit_saves_its_proof_and_generated_artifacts,
                        test::reference_db_fixture) {
  add_template(sim_template("t", R"({"answer": {"submit": {"next_state": "SUBMITTED",
      "provider_state": "ACCEPTED", "provider_refs": {"tx": "0xabc"}, "provider_ref_id": "p-1",
      "generated_artifacts": [{"receipt": 1}]}}})"));
  auto n = node_id(*this, create_and_approve("t"));
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "SUBMITTED");
  BOOST_TEST(proof_field(*this, n, "submit_proof", "next_state") == "SUBMITTED");
  BOOST_TEST(proof_field(*this, n, "submit_proof", "provider_state") == "ACCEPTED");
  BOOST_TEST(proof_field(*this, n, "submit_proof", "provider_refs,tx") == "0xabc");
  BOOST_TEST(proof_field(*this, n, "submit_proof", "provider_ref_id") == "p-1");
  BOOST_TEST(generated(*this, n) == R"([{"receipt": 1}])");
}

BOOST_FIXTURE_TEST_CASE(observe_saves_its_proof_and_generated_artifacts,
                        test::reference_db_fixture) {
  add_template(sim_template("t", R"({"answer": {"observe": {"next_state": "COMPLETED",
      "provider_state": "FINAL", "provider_refs": {"block": 12}, "provider_ref_id": "o-1",
      "generated_artifacts": [{"o": 1}, {"o": 2}]}}})"));
  auto n = node_id(*this, create_and_approve("t"));
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "COMPLETED");
  BOOST_TEST(proof_field(*this, n, "observe_proof", "next_state") == "COMPLETED");
  BOOST_TEST(proof_field(*this, n, "observe_proof", "provider_state") == "FINAL");
  BOOST_TEST(proof_field(*this, n, "observe_proof", "provider_refs,block") == "12");
  BOOST_TEST(proof_field(*this, n, "observe_proof", "provider_ref_id") == "o-1");
  BOOST_TEST(generated(*this, n) == R"([{"o": 1}, {"o": 2}])");
}

// Old code: the recover proof was {outcome, next_state} only and the
// answer's generated artifacts were dropped.
BOOST_FIXTURE_TEST_CASE(recover_saves_the_whole_answer_and_its_generated_artifacts,
                        test::reference_db_fixture) {
  add_template(sim_template("t", R"({"unknown_at": "submit", "answer": {"recover":
      {"outcome": "found", "result": {"next_state": "COMPLETED", "provider_state": "SETTLED",
       "provider_refs": {"block": 7}, "provider_ref_id": "r-1",
       "generated_artifacts": [{"recovered": true}]}}}})"));
  auto id = create_and_approve("t");
  auto n = node_id(*this, id);
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_REQUIRE(node_col(*this, n, "node_state") == "UNKNOWN");
  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "COMPLETED");
  BOOST_TEST(proof_field(*this, n, "recover_proof", "outcome") == "found");
  BOOST_TEST(proof_field(*this, n, "recover_proof", "next_state") == "COMPLETED");
  BOOST_TEST(proof_field(*this, n, "recover_proof", "provider_state") == "SETTLED");
  BOOST_TEST(proof_field(*this, n, "recover_proof", "provider_refs,block") == "7");
  BOOST_TEST(proof_field(*this, n, "recover_proof", "provider_ref_id") == "r-1");
  BOOST_TEST(generated(*this, n) == R"([{"recovered": true}])");
  // and the node took the answer's refs
  BOOST_TEST(scalar("SELECT provider_refs->>'block' FROM movement_request_nodes WHERE id = '" + n +
                    "'") == "7");
}

BOOST_FIXTURE_TEST_CASE(the_sims_own_recover_answer_is_recorded_whole, test::reference_db_fixture) {
  add_template(sim_template("t", R"({"unknown_at": "submit"})"));
  auto n = node_id(*this, create_and_approve("t"));
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 1);
  BOOST_TEST(proof_field(*this, n, "recover_proof", "outcome") == "found");
  BOOST_TEST(proof_field(*this, n, "recover_proof", "provider_state") == "COMPLETED");
  BOOST_TEST(proof_field(*this, n, "recover_proof", "provider_refs,sim_ref") == n + ":1");
  BOOST_TEST(proof_field(*this, n, "recover_proof", "provider_ref_id") == "sim-" + n + ":1");
}

BOOST_AUTO_TEST_SUITE_END()
