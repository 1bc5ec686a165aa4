// Signed callbacks end to end against `movegate serve` processes: a process
// killed between enqueue and delivery loses no event, a slow receiver does
// not slow the engine, and `movegate callbacks verify` judges deliveries.
#include <boost/test/unit_test.hpp>

#include <csignal>
#include <ctime>
#include <fstream>
#include <set>
#include <thread>
#include <unistd.h>

#include "build_paths.hpp"
#include "domain/callback_signature.hpp"
#include "domain/json.hpp"
#include "tests/support/api_client.hpp"
#include "tests/support/callback_receiver.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/process.hpp"
#include "tests/support/serve_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

const char* const secret = "e2e-callback-secret-42";

std::string template_json() {
  return R"({"template_key": "cb_chain", "version": 1,
    "nodes": [
      {"node_key": "send", "action_type": "chain_transfer", "executor_key": "sim",
       "side_effect": true},
      {"node_key": "confirm", "action_type": "destination_chain_finality_observe",
       "executor_key": "sim", "config": {"sim": {"polls_until_done": 1, "retry_after_seconds": 0}}}],
    "edges": [["send", "confirm"]]})";
}

const test::api_key_spec maker{"maker", "0123456789abcdef0123456789abcdef",
                               R"(["create", "read"])"};
const test::api_key_spec checker{"checker", "fedcba9876543210fedcba9876543210",
                                 R"(["approve", "read"])"};

struct callbacks_fixture : test::serve_fixture {
  callbacks_fixture() {
    add_template(template_json());
    keys = {maker, checker};
  }

  void start(const std::string& node, std::map<std::string, std::string> extra = {}) {
    extra.emplace("MG_CALLBACK_SECRET", secret);
    extra.emplace("MG_CALLBACK_ALLOW_PRIVATE", "true");
    test::serve_fixture::start(node, extra);
  }

  /// Creates (maker) and approves (checker) a movement that calls back `hook`.
  std::string create_and_approve(const std::string& idem, const std::string& hook) {
    auto created = client(maker).post("/v3/movements",
                                      R"({"template_key": "cb_chain", "intent": {"asset": "USDC", )"
                                      R"("amount": "5"}, "callback_url": ")" +
                                          hook + R"(", "idempotency_key": ")" + idem + "\"}");
    BOOST_REQUIRE_MESSAGE(created.status == 201, created.body);
    auto id = json::get_string(json::parse_trusted(created.body, "movement"), "id");
    auto approved = client(checker).post("/v3/movements/" + id + "/approve");
    BOOST_REQUIRE_MESSAGE(approved.status == 200, approved.body);
    return id;
  }
};

int run_cli(const std::vector<std::string>& args, std::string* out = nullptr) {
  auto log = std::string(MG_BINARY_DIR) + "/e2e-cb-cli-" + std::to_string(getpid()) + ".log";
  test::child c(args, {}, log);
  int rc = c.wait(20s);
  if (out)
    *out = c.log();
  std::remove(log.c_str());
  return rc;
}

std::string write_file(const std::string& tag, const std::string& content) {
  auto path = std::string(MG_BINARY_DIR) + "/e2e-cb-" + tag + "-" + std::to_string(getpid());
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

std::string headers_json(const domain::header_list& h) {
  std::string out = "{";
  for (size_t i = 0; i < h.size(); ++i)
    out += (i ? ", " : "") + json::quote(h[i].first) + ": " + json::quote(h[i].second);
  return out + "}";
}

} // namespace

BOOST_AUTO_TEST_SUITE(callbacks_e2e)

BOOST_FIXTURE_TEST_CASE(killed_between_enqueue_and_delivery_loses_no_event, callbacks_fixture) {
  int hook_port = test::free_port(); // the receiver is down for now
  auto hook = "http://127.0.0.1:" + std::to_string(hook_port) + "/hook";
  std::map<std::string, std::string> env{{"MG_CALLBACK_MAX_ATTEMPTS", "20"},
                                         {"MG_CALLBACK_TIMEOUT_SECONDS", "2"}};
  start("cb-crash-a", env);
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i)
    ids.push_back(create_and_approve("crash-" + std::to_string(i), hook));
  // Every event is written (and enqueued) while the receiver is down.
  BOOST_REQUIRE_MESSAGE(
      wait_for("SELECT count(*) = 3 FROM movement_requests WHERE request_state = 'COMPLETED'", 15s),
      server->log());
  stop(SIGKILL);
  BOOST_TEST(count("SELECT count(*) FROM movement_callback_outbox WHERE status = 'sent'") == 0);

  test::callback_receiver receiver(0, 0ms, hook_port);
  start("cb-crash-b", env);
  BOOST_REQUIRE_MESSAGE(
      wait_for("SELECT count(*) = 3 FROM movement_requests WHERE request_state = 'COMPLETED'", 30s),
      server->log());
  BOOST_REQUIRE_MESSAGE(
      wait_for("SELECT count(*) = 0 FROM movement_callback_outbox WHERE status <> 'sent'", 90s),
      scalar("SELECT string_agg(status || ':' || attempts || ':' || coalesce(last_error, ''), ',')"
             " FROM movement_callback_outbox"));
  std::set<std::string> seen;
  for (auto& r : receiver.received())
    seen.insert(json::get_string(json::parse_trusted(r.body, "callback"), "event_id"));
  auto events = count("SELECT count(*) FROM movement_events");
  BOOST_TEST(events >= 3 * 6);
  BOOST_TEST(count("SELECT count(*) FROM movement_callback_outbox") == events);
  std::set<std::string> expected;
  pqxx::work tx(*other);
  for (const auto& row : tx.exec("SELECT id::text FROM movement_events"))
    expected.insert(row[0].c_str());
  BOOST_TEST(seen == expected, "every event delivered, none lost");
}

BOOST_FIXTURE_TEST_CASE(slow_receiver_does_not_delay_the_engine, callbacks_fixture) {
  test::callback_receiver receiver(0, 3000ms); // past MG_CALLBACK_TIMEOUT_SECONDS=1
  start("cb-slow", {{"MG_CALLBACK_TIMEOUT_SECONDS", "1"}});
  auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i)
    create_and_approve("slow-" + std::to_string(i), receiver.url());
  // Dispatch and observation run on their own workers and connections.
  BOOST_TEST(
      wait_for("SELECT count(*) = 3 FROM movement_requests WHERE request_state = 'COMPLETED'", 5s),
      server->log());
  BOOST_TEST_MESSAGE(
      "completed after "
      << std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() << " s");
  BOOST_TEST(wait_for("SELECT count(*) > 0 FROM movement_callback_outbox"
                      " WHERE last_error LIKE 'timeout%'",
                      10s));
  BOOST_TEST(count("SELECT count(*) FROM movement_callback_outbox WHERE status = 'sent'") == 0);
}

BOOST_AUTO_TEST_CASE(verify_cli_judges_deliveries) {
  std::string body = R"({"event_id": "e1", "event_type": "request_created"})";
  auto body_file = write_file("body", body);
  auto tampered_file = write_file("tampered", body + " ");
  int64_t ts = 1700000000;
  auto v3 = write_file("v3", headers_json(domain::v3_headers(secret, ts, "abc123", body)));
  std::string out;
  BOOST_TEST(
      run_cli({"callbacks", "verify", "--secret", secret, "--headers", v3, "--body", body_file},
              &out) == 0);
  BOOST_TEST(out.find("valid") != std::string::npos, out);
  BOOST_TEST(
      run_cli({"callbacks", "verify", "--secret", secret, "--headers", v3, "--body", tampered_file},
              &out) == 1);
  BOOST_TEST(out.find("signature mismatch") != std::string::npos, out);
  BOOST_TEST(run_cli({"callbacks", "verify", "--secret", "wrong", "--headers", v3, "--body",
                      body_file}) == 1);
  // v3 timestamps are fixed at enqueue: the window applies on request.
  BOOST_TEST(run_cli({"callbacks", "verify", "--secret", secret, "--headers", v3, "--body",
                      body_file, "--check-age", "--now", std::to_string(ts + 301)},
                     &out) == 1);
  BOOST_TEST(out.find("tolerance") != std::string::npos, out);

  const char* whsec = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  auto sw = headers_json(domain::standard_webhooks_headers(whsec, "evt_1", ts, body));
  BOOST_TEST(run_cli({"callbacks", "verify", "--secret", whsec, "--headers", sw, "--body",
                      body_file, "--now", std::to_string(ts + 10)}) == 0);
  BOOST_TEST(run_cli({"callbacks", "verify", "--scheme", "standard-webhooks", "--secret", whsec,
                      "--headers", sw, "--body", body_file, "--now", std::to_string(ts + 301)},
                     &out) == 1);
  BOOST_TEST(out.find("tolerance") != std::string::npos, out);
  BOOST_TEST(run_cli({"callbacks", "verify", "--secret", whsec, "--headers", sw, "--body",
                      tampered_file, "--now", std::to_string(ts)}) == 1);
  BOOST_TEST(run_cli({"callbacks", "verify", "--secret", "whsec_QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB",
                      "--headers", sw, "--body", body_file, "--now", std::to_string(ts)}) == 1);
  BOOST_TEST(run_cli({"callbacks", "verify", "--headers", sw}) == 2); // usage
  for (auto& f : {body_file, tampered_file, v3})
    std::remove(f.c_str());
}

BOOST_AUTO_TEST_SUITE_END()
