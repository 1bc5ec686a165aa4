// `movegate movements ...` and `movegate workers` against a live serve: the
// CLI lists, shows and approves (with the approver's key file) a movement
// created over the API, which then completes; --json prints the API body;
// a refusal exits 1 showing the error code; usage errors exit 2.
#include <boost/test/unit_test.hpp>

#include "domain/json.hpp"
#include "tests/e2e/ops_serve_fixture.hpp"

using namespace mg;
using namespace mg::test::ops;

namespace {

struct cli_fixture : ops_fixture {
  std::string creator_key = prefix + "-creator.key.json";
  std::string approver_key = prefix + "-approver.key.json";

  cli_fixture() {
    write_file(creator_key, key_entry(creator));
    write_file(approver_key, key_entry(approver));
  }
  ~cli_fixture() {
    std::remove(creator_key.c_str());
    std::remove(approver_key.c_str());
  }

  /// `movegate <args>` against this fixture's listeners; exit code and output.
  shell_result cli(const std::string& args, const std::string& key_file) {
    std::string env = "MG_API_URL=http://127.0.0.1:" + std::to_string(api_port) +
                      " MG_ADMIN_URL=http://127.0.0.1:" + std::to_string(admin_port) +
                      " MG_ADMIN_TOKEN=" + admin_token +
                      (key_file.empty() ? "" : " MG_CLI_KEY_FILE=" + key_file);
    return run_shell("env " + env + " " + test::movegate_binary() + " " + args);
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(operator_cli)

BOOST_FIXTURE_TEST_CASE(lists_shows_and_approves_until_completed, cli_fixture) {
  start();
  auto id = create("cli-1");

  auto listed = cli("movements list --state PENDING_APPROVAL", creator_key);
  BOOST_TEST(listed.status == 0, listed.output);
  BOOST_TEST(listed.output.find("ID") != std::string::npos);
  BOOST_TEST(listed.output.find(id) != std::string::npos, listed.output);
  BOOST_TEST(listed.output.find("PENDING_APPROVAL") != std::string::npos);

  auto shown = cli("movements show " + id, creator_key);
  BOOST_TEST(shown.status == 0, shown.output);
  BOOST_TEST(shown.output.find("request_state: PENDING_APPROVAL") != std::string::npos,
             shown.output);
  BOOST_TEST(shown.output.find("send") != std::string::npos);
  BOOST_TEST(shown.output.find("BLOCKED") != std::string::npos);

  auto approved = cli("movements approve " + id, approver_key);
  BOOST_TEST(approved.status == 0, approved.output);
  BOOST_REQUIRE(wait_state(id, "COMPLETED"));

  auto as_json = cli("movements show " + id + " --json", creator_key);
  BOOST_TEST(as_json.status == 0, as_json.output);
  auto doc = json::parse(as_json.output);
  BOOST_REQUIRE_MESSAGE(doc && doc->IsObject(), as_json.output);
  BOOST_TEST(json::get_string(*doc, "request_state") == "COMPLETED");

  auto page = json::parse(cli("movements list --json --limit 5", creator_key).output);
  BOOST_REQUIRE(page && page->IsObject() && (*page)["items"].IsArray());
  BOOST_TEST((*page)["items"].Size() == 1u);

  auto workers = cli("workers", "");
  BOOST_TEST(workers.status == 0, workers.output);
  BOOST_TEST(workers.output.find("node_dispatcher") != std::string::npos, workers.output);
  BOOST_TEST(workers.output.find("HEARTBEAT") != std::string::npos);
  BOOST_TEST(workers.output.find("yes") != std::string::npos); // running in this process
}

BOOST_FIXTURE_TEST_CASE(refusals_exit_1_with_the_error_code, cli_fixture) {
  start();
  auto id = create("cli-2");
  // Four-eyes: the creating key cannot approve (its key lacks the scope too).
  auto refused = cli("movements approve " + id, creator_key);
  BOOST_TEST(refused.status == 1, refused.output);
  BOOST_TEST(refused.output.find("403") != std::string::npos, refused.output);
  BOOST_TEST(refused.output.find("forbidden") != std::string::npos, refused.output);

  auto not_pending = cli("movements retry " + id + " --node send", approver_key);
  BOOST_TEST(not_pending.status == 1, not_pending.output);
  BOOST_TEST(not_pending.output.find("409") != std::string::npos, not_pending.output);

  auto rejected = cli("movements reject " + id + " --reason 'not today'", approver_key);
  BOOST_TEST(rejected.status == 0, rejected.output);
  BOOST_TEST(scalar("SELECT request_state FROM movement_requests WHERE id = '" + id + "'") ==
             "REJECTED");

  BOOST_TEST(cli("movements show", creator_key).status == 2);
  BOOST_TEST(cli("movements frobnicate " + id, creator_key).status == 2);
  BOOST_TEST(cli("movements list", "").status == 2);                  // no key file
  BOOST_TEST(cli("movements retry " + id, approver_key).status == 2); // --node missing
}

BOOST_AUTO_TEST_SUITE_END()
