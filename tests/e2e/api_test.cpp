// The /v3 API over real HTTP against a `movegate serve` process: a signed
// create → approve → COMPLETED through the engine with its audit trail, a
// table of bad inputs that each get their documented status and change
// nothing but api_nonces, and a database outage answered with 503.
#include <boost/test/unit_test.hpp>

#include <csignal>
#include <thread>
#include <unistd.h>

#include "domain/json.hpp"
#include "tests/support/api_client.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/process.hpp"
#include "tests/support/serve_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

using key = test::api_key_spec;

const key creator{"creator", "c0ffee00c0ffee00c0ffee00c0ffee00", R"(["create", "read"])"};
const key approver{"approver", "a11ce000a11ce000a11ce000a11ce000", R"(["approve", "read"])"};
const key reader{"reader", "4ead004ead004ead004ead004ead0000", R"(["read"])"};
const key both{"both", "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0", R"(["create", "approve", "read"])"};
const key admin{"admin", "adadadadadadadadadadadadadadadad", R"(["admin", "read"])"};

std::string e2e_template() {
  return R"({"template_key": "e2e_chain", "version": 1,
    "risk_controls": {"max_amount": "1000"},
    "nodes": [
      {"node_key": "send", "action_type": "chain_transfer", "executor_key": "sim",
       "side_effect": true, "config": {"to": "$ref:input.to"}},
      {"node_key": "confirm", "action_type": "destination_chain_finality_observe",
       "executor_key": "sim", "config": {"tx": "$ref:send.tx_hash",
       "sim": {"polls_until_done": 1, "retry_after_seconds": 0}}}],
    "edges": [["send", "confirm"]]})";
}

std::string create_body(const std::string& idem, const std::string& amount = "250.5",
                        const std::string& extra = "") {
  return R"({"template_key": "e2e_chain", "intent": {"asset": "USDC", "amount": ")" + amount +
         R"("}, "input_params": {"to": "0xabc"}, "idempotency_key": ")" + idem + "\"" + extra + "}";
}

struct api_fixture : test::serve_fixture {
  api_fixture() {
    add_template(e2e_template());
    keys = {creator, approver, reader, both, admin};
  }

  /// Everything a refused call must leave alone: row counts of every table
  /// but api_nonces and the heartbeats, plus the content of the tables the
  /// API writes.
  std::string fingerprint() {
    return scalar(R"(SELECT concat_ws('|',
      (SELECT count(*) FROM movement_requests), (SELECT md5(coalesce(string_agg(r::text, ',' ORDER BY id), '')) FROM movement_requests r),
      (SELECT count(*) FROM movement_request_nodes), (SELECT md5(coalesce(string_agg(n::text, ',' ORDER BY id), '')) FROM movement_request_nodes n),
      (SELECT count(*) FROM movement_events), (SELECT count(*) FROM movement_callback_outbox),
      (SELECT count(*) FROM node_artifacts), (SELECT count(*) FROM audit_outbox),
      (SELECT count(*) FROM audit_events), (SELECT count(*) FROM templates),
      (SELECT md5(coalesce(string_agg(p::text, ',' ORDER BY id), '')) FROM template_proposals p),
      (SELECT md5(coalesce(string_agg(s::text, ',' ORDER BY signer_key), '')) FROM signer_identities s),
      (SELECT count(*) FROM sim_ledger)))");
  }
};

std::string field(const std::string& body, const char* name) {
  return test::json_field(body, name);
}

std::string error_code(const std::string& body) {
  auto doc = json::parse(body);
  if (!doc || !doc->IsObject() || !doc->HasMember("error") || !(*doc)["error"].IsObject())
    return "";
  return json::get_string((*doc)["error"], "code");
}

} // namespace

BOOST_AUTO_TEST_SUITE(api_e2e)

BOOST_FIXTURE_TEST_CASE(signed_create_approve_runs_to_completed_with_audit_trail, api_fixture) {
  start();
  auto c = client(creator);
  auto created = c.post("/v3/movements", create_body("e2e-1"));
  BOOST_REQUIRE_MESSAGE(created.status == 201, created.body);
  BOOST_TEST(field(created.body, "deduplicated") == "false");
  BOOST_TEST(field(created.body, "request_state") == "PENDING_APPROVAL");
  auto id = field(created.body, "id");
  BOOST_REQUIRE(!id.empty());

  auto again = c.post("/v3/movements", create_body("e2e-1"));
  BOOST_TEST(again.status == 200);
  BOOST_TEST(field(again.body, "deduplicated") == "true");
  BOOST_TEST(field(again.body, "id") == id);

  auto a = client(approver);
  auto approved = a.post("/v3/movements/" + id + "/approve", R"({"approver_id": "ops-2"})");
  BOOST_REQUIRE_MESSAGE(approved.status == 200, approved.body);

  auto completed = [&] {
    return field(c.get("/v3/movements/" + id).body, "request_state") == "COMPLETED";
  };
  bool done = false;
  for (int i = 0; i < 500 && !(done = completed()); ++i)
    std::this_thread::sleep_for(20ms);
  BOOST_REQUIRE_MESSAGE(done, c.get("/v3/movements/" + id).body);

  // The audit trail: the create and the approve, each promoted exactly once.
  BOOST_TEST(
      wait_for("SELECT count(*) = 2 FROM audit_events WHERE subject LIKE '%" + id + "%'", 10s));
  BOOST_TEST(scalar("SELECT string_agg(actor || ':' || action, ',' ORDER BY occurred_at) FROM "
                    "audit_events WHERE subject LIKE '%" +
                    id + "%'") == "creator:create,approver:approve");
  BOOST_TEST(count("SELECT count(*) FROM audit_outbox WHERE promoted_at IS NULL") == 0);
  auto events = c.get("/v3/movements/" + id + "/events");
  BOOST_TEST(events.status == 200);
  BOOST_TEST(events.body.find("request_completed") != std::string::npos);
  // The intent is kept as given: numbers a double cannot hold come back exact.
  auto exact = c.post("/v3/movements",
                      R"({"template_key": "e2e_chain", "intent": {"asset": "USDC", "amount": "1",)"
                      R"( "ref": 123456789012345678901234567890, "fee": 0.1000000000000000000001},)"
                      R"( "input_params": {"to": "0xabc", "n": 9007199254740993},)"
                      R"( "idempotency_key": "e2e-exact"})");
  BOOST_REQUIRE_MESSAGE(exact.status == 201, exact.body);
  BOOST_TEST(exact.body.find("123456789012345678901234567890") != std::string::npos);
  BOOST_TEST(exact.body.find("0.1000000000000000000001") != std::string::npos);
  BOOST_TEST(exact.body.find("9007199254740993") != std::string::npos);

  // Each node was submitted once.
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE NOT fenced") == 2);
}

BOOST_FIXTURE_TEST_CASE(bad_input_gets_its_status_and_changes_nothing, api_fixture) {
  start();
  auto c = client(creator);
  auto pending = field(c.post("/v3/movements", create_body("pending-1")).body, "id");
  auto by_both = field(client(both).post("/v3/movements", create_body("both-1")).body, "id");
  auto rejected = field(c.post("/v3/movements", create_body("rejected-1")).body, "id");
  BOOST_REQUIRE(!pending.empty() && !by_both.empty() && !rejected.empty());
  BOOST_REQUIRE(client(approver).post("/v3/movements/" + rejected + "/reject").status == 200);
  BOOST_REQUIRE(wait_for("SELECT count(*) > 0 FROM signers WHERE signer_key = 'sim'", 10s));
  const std::string unknown_id = "7b0c3c1e-9d2b-4c55-8a53-2f4e6d8a9b10";
  const std::string huge_digits(79, '9');

  struct bad {
    std::string name;
    std::string method;
    std::string target;
    std::string body;
    const key* who;
    test::request_options options;
    int status;
  };
  auto opts = [](auto f) {
    test::request_options o;
    f(o);
    return o;
  };
  auto now = std::to_string(std::time(nullptr));
  test::request_options plain;
  auto create = [&](std::string name, std::string body, int status,
                    test::request_options o = test::request_options{}) {
    return bad{std::move(name), "POST", "/v3/movements", std::move(body), &creator, o, status};
  };
  auto approve_call = [&](std::string name, std::string id, std::string body, const key* who,
                          int status) {
    return bad{std::move(name), "POST", "/v3/movements/" + id + "/approve",
               std::move(body), who,    test::request_options{},
               status};
  };
  std::vector<bad> cases = {
      // --- 401: authentication ------------------------------------------------
      {"no auth headers", "GET", "/v3/movements", "", &reader,
       opts([](auto& o) { o.sign = false; }), 401},
      {"no signature", "GET", "/v3/movements", "", &reader,
       opts([](auto& o) { o.omit_headers = {"X-QTG-Signature"}; }), 401},
      {"no timestamp", "GET", "/v3/movements", "", &reader,
       opts([](auto& o) { o.omit_headers = {"X-QTG-Timestamp"}; }), 401},
      {"no nonce", "GET", "/v3/movements", "", &reader,
       opts([](auto& o) { o.omit_headers = {"X-QTG-Nonce"}; }), 401},
      {"no key id", "GET", "/v3/movements", "", &reader,
       opts([](auto& o) { o.omit_headers = {"X-QTG-Key-Id"}; }), 401},
      {"unknown key", "GET", "/v3/movements", "", &reader,
       opts([](auto& o) { o.key_id = "mallory"; }), 401},
      {"forged signature", "GET", "/v3/movements", "", &reader,
       opts([](auto& o) { o.secret = "not-the-secret-not-the-secret-00"; }), 401},
      {"garbage signature", "GET", "/v3/movements", "", &reader,
       opts([](auto& o) { o.signature = "zz"; }), 401},
      {"timestamp 360 s ahead", "GET", "/v3/movements", "", &reader,
       opts([](auto& o) { o.timestamp = std::to_string(std::time(nullptr) + 360); }), 401},
      {"timestamp 400 s old", "GET", "/v3/movements", "", &reader,
       opts([](auto& o) { o.timestamp = std::to_string(std::time(nullptr) - 400); }), 401},
      {"timestamp not a number", "GET", "/v3/movements", "", &reader,
       opts([&](auto& o) { o.timestamp = now + "a"; }), 401},
      {"nonce too short", "GET", "/v3/movements", "", &reader,
       opts([](auto& o) { o.nonce = "abc"; }), 401},
      {"nonce with a bad character", "GET", "/v3/movements", "", &reader,
       opts([](auto& o) { o.nonce = "abcdefghijklmnop$"; }), 401},
      {"nonce of 129 characters", "GET", "/v3/movements", "", &reader,
       opts([](auto& o) { o.nonce = std::string(129, 'n'); }), 401},
      {"create signed by a forger", "POST", "/v3/movements", create_body("forged"), &creator,
       opts([](auto& o) { o.secret = "not-the-secret-not-the-secret-00"; }), 401},
      // --- 403: scope and four-eyes -------------------------------------------
      {"read key creates", "POST", "/v3/movements", create_body("scope-1"), &reader, plain, 403},
      {"create key approves", "POST", "/v3/movements/" + pending + "/approve", "", &creator, plain,
       403},
      {"approve key creates", "POST", "/v3/movements", create_body("scope-2"), &approver, plain,
       403},
      {"read key proposes a template", "POST", "/v3/template-proposals", "{}", &reader, plain, 403},
      {"create key sets an expected identity", "PUT", "/v3/signers/sim/expected-identity",
       R"({"address": "0x2c7536e3605d9c16a7a3d7b1898e529396a65c23"})", &creator, plain, 403},
      approve_call("creator approves its own request", by_both, "", &both, 403),
      // --- 413 ------------------------------------------------------------------
      create("body over 1 MiB", "{\"pad\": \"" + std::string(1024 * 1024, 'x') + "\"}", 413),
      // --- 400: not JSON, wrong shapes ------------------------------------------
      create("malformed JSON", R"({"template_key": "e2e_chain",)", 400),
      create("truncated JSON", create_body("trunc").substr(0, 40), 400),
      create("JSON array", "[]", 400),
      create("JSON string", R"("movement")", 400),
      create("JSON number", "42", 400),
      create("JSON null", "null", 400),
      create("empty object", "{}", 400),
      create("missing template_key",
             R"({"intent": {"asset": "USDC", "amount": "1"}, "idempotency_key": "k-1"})", 400),
      create(
          "template_key is a number",
          R"({"template_key": 7, "intent": {"asset": "USDC", "amount": "1"}, "idempotency_key": "k-2"})",
          400),
      create("intent is a string",
             R"({"template_key": "e2e_chain", "intent": "1 USDC", "idempotency_key": "k-3"})", 400),
      create(
          "amount is a number",
          R"({"template_key": "e2e_chain", "intent": {"asset": "USDC", "amount": 100}, "idempotency_key": "k-4"})",
          400),
      create(
          "amount is null",
          R"({"template_key": "e2e_chain", "intent": {"asset": "USDC", "amount": null}, "idempotency_key": "k-5"})",
          400),
      create("missing idempotency_key",
             R"({"template_key": "e2e_chain", "intent": {"asset": "USDC", "amount": "1"}})", 400),
      create(
          "idempotency_key is a number",
          R"({"template_key": "e2e_chain", "intent": {"asset": "USDC", "amount": "1"}, "idempotency_key": 12})",
          400),
      create("unknown top-level field", create_body("k-6", "1", R"(, "priority": "high")"), 400),
      create(
          "input_params is an array",
          R"({"template_key": "e2e_chain", "intent": {"asset": "USDC", "amount": "1"}, "input_params": [1], "idempotency_key": "k-7"})",
          400),
      create("template_version is a string",
             create_body("k-8", "1", R"(, "template_version": "1")"), 400),
      create("template_version is fractional",
             create_body("k-9", "1", R"(, "template_version": 1.5)"), 400),
      create("template_version overflows JSON numbers",
             create_body("k-10", "1", R"(, "template_version": 1e400)"), 400),
      create("callback_url is a number", create_body("k-11", "1", R"(, "callback_url": 5)"), 400),
      approve_call("approve with an unknown field", pending, R"({"approver": "x"})", &approver,
                   400),
      approve_call("approve with an array body", pending, "[1]", &approver, 400),
      {"retry without node_key", "POST", "/v3/movements/" + pending + "/retry", "{}", &approver,
       plain, 400},
      {"retry with a numeric node_key", "POST", "/v3/movements/" + pending + "/retry",
       R"({"node_key": 3})", &approver, plain, 400},
      {"reject with a numeric reason", "POST", "/v3/movements/" + pending + "/reject",
       R"({"reason": 3})", &approver, plain, 400},
      {"complete with string provider_refs", "POST",
       "/v3/movements/" + pending + "/nodes/send/complete", R"({"provider_refs": "x"})", &approver,
       plain, 400},
      {"list with limit 0", "GET", "/v3/movements?limit=0", "", &reader, plain, 400},
      {"list with limit 201", "GET", "/v3/movements?limit=201", "", &reader, plain, 400},
      {"list with a word for limit", "GET", "/v3/movements?limit=ten", "", &reader, plain, 400},
      {"list with an unknown state", "GET", "/v3/movements?state=BOGUS", "", &reader, plain, 400},
      {"list with a forged cursor", "GET", "/v3/movements?cursor=%27%3B--", "", &reader, plain,
       400},
      {"list with an unknown parameter", "GET", "/v3/movements?sort=amount", "", &reader, plain,
       400},
      // --- 404 ------------------------------------------------------------------
      {"get a non-UUID id", "GET", "/v3/movements/not-a-uuid", "", &reader, plain, 404},
      {"get an unknown id", "GET", "/v3/movements/" + unknown_id, "", &reader, plain, 404},
      approve_call("approve an unknown id", unknown_id, "", &approver, 404),
      approve_call("approve a SQL-injection id", "1%27%20OR%20%271%27%3D%271", "", &approver, 404),
      {"unknown path", "GET", "/v3/nope", "", &reader, plain, 404},
      {"unknown template key", "GET", "/v3/templates/no_such_template", "", &reader, plain, 404},
      {"approve an unknown proposal", "POST", "/v3/template-proposals/" + unknown_id + "/approve",
       "", &admin, plain, 404},
      {"expected identity of an unknown signer", "PUT",
       "/v3/signers/no_such_signer/expected-identity",
       R"({"address": "0x2c7536e3605d9c16a7a3d7b1898e529396a65c23"})", &admin, plain, 404},
      // --- 422: well-formed but invalid ------------------------------------------
      create("negative amount", create_body("k-20", "-1"), 422),
      create("zero amount", create_body("k-21", "0.000"), 422),
      create("exponent amount", create_body("k-22", "1e5"), 422),
      create("two decimal points", create_body("k-23", "1.5.2"), 422),
      create("empty amount", create_body("k-24", ""), 422),
      create("79-digit amount", create_body("k-25", huge_digits), 422),
      create("full-width digits", create_body("k-26", "\xef\xbc\x91\xef\xbc\x92"), 422),
      create("amount over max_amount", create_body("k-27", "1000.000001"), 422),
      create(
          "SQL in template_key",
          R"({"template_key": "x'; DROP TABLE movement_requests; --", "intent": {"asset": "USDC", "amount": "1"}, "idempotency_key": "k-28"})",
          422),
      create(
          "unknown template",
          R"({"template_key": "no_such", "intent": {"asset": "USDC", "amount": "1"}, "idempotency_key": "k-29"})",
          422),
      create("unknown template version", create_body("k-30", "1", R"(, "template_version": 99)"),
             422),
      create("ftp callback_url",
             create_body("k-31", "1", R"(, "callback_url": "ftp://x.example/cb")"), 422),
      create("loopback callback_url",
             create_body("k-32", "1", R"(, "callback_url": "http://127.0.0.1:9/cb")"), 422),
      create("private callback_url",
             create_body("k-33", "1", R"(, "callback_url": "https://10.1.2.3/cb")"), 422),
      create("link-local callback_url",
             create_body("k-34", "1", R"(, "callback_url": "http://169.254.169.254/latest")"), 422),
      create("localhost callback_url",
             create_body("k-35", "1", R"(, "callback_url": "http://localhost/cb")"), 422),
      create("callback_url that is not a URL",
             create_body("k-36", "1", R"(, "callback_url": "not a url")"), 422),
      create("idempotency_key with a space", create_body("has space"), 422),
      create("idempotency_key of 129 characters", create_body(std::string(129, 'k')), 422),
      create("unicode idempotency_key", create_body("\xf0\x9f\x92\xb8"), 422),
      {"cyclic template proposal", "POST", "/v3/template-proposals",
       R"({"template_key": "cyc", "plan": {"template_key": "cyc", "version": 1, "nodes": [
         {"node_key": "a", "action_type": "x", "executor_key": "sim"},
         {"node_key": "b", "action_type": "x", "executor_key": "sim"}],
         "edges": [["a", "b"], ["b", "a"]]}})",
       &admin, plain, 422},
      {"expected identity that is not an address", "PUT", "/v3/signers/sim/expected-identity",
       R"({"address": "0x1234"})", &admin, plain, 422},
      // --- 409: state conflicts ------------------------------------------------
      approve_call("approve a rejected request", rejected, "", &approver, 409),
      {"reject a rejected request", "POST", "/v3/movements/" + rejected + "/reject", "", &approver,
       plain, 409},
      {"cancel a rejected request", "POST", "/v3/movements/" + rejected + "/cancel", "", &approver,
       plain, 409},
      {"resume a pending request", "POST", "/v3/movements/" + pending + "/resume", "", &approver,
       plain, 409},
      {"retry on a pending request", "POST", "/v3/movements/" + pending + "/retry",
       R"({"node_key": "send"})", &approver, plain, 409},
      {"complete a non-manual node", "POST", "/v3/movements/" + pending + "/nodes/send/complete",
       "", &approver, plain, 409},
      create("same idempotency key, other body", create_body("pending-1", "999"), 409),
  };
  BOOST_TEST(cases.size() >= 60u);
  // The audit promoter copies the set-up's audit rows in the background:
  // let it finish, or its write lands between a case's two fingerprints.
  BOOST_REQUIRE(wait_for("SELECT count(*) = 0 FROM audit_outbox WHERE promoted_at IS NULL", 60s));

  for (auto& tc : cases) {
    BOOST_TEST_CONTEXT(tc.name) {
      auto before = fingerprint();
      auto api = client(*tc.who);
      auto reply = api.request(tc.method, tc.target, tc.body, tc.options);
      BOOST_TEST(reply.status == tc.status, reply.body);
      BOOST_TEST(reply.status != 500);
      BOOST_TEST(!error_code(reply.body).empty(), "error body: " << reply.body);
      BOOST_TEST(reply.header("Content-Type").find("application/json") == 0);
      BOOST_TEST(fingerprint() == before);
    }
  }

  // A replayed nonce is refused, after the first use succeeded.
  auto r = client(reader);
  BOOST_TEST(r.get("/v3/movements").status == 200);
  test::request_options replay;
  replay.nonce = r.last_nonce();
  BOOST_TEST(r.get("/v3/movements", replay).status == 401);
  BOOST_TEST(server->running());
}

BOOST_FIXTURE_TEST_CASE(database_outage_answers_503_and_serving_resumes, api_fixture) {
  start();
  auto r = client(reader);
  BOOST_REQUIRE(r.get("/v3/movements").status == 200);
  auto dbname = scalar("SELECT current_database()");
  auto admin_conn = db::connect(test::url_for_database(url, "postgres"));
  auto set_connections = [&](bool allowed) {
    pqxx::nontransaction tx(*admin_conn);
    tx.exec("ALTER DATABASE \"" + dbname + "\" ALLOW_CONNECTIONS " + (allowed ? "true" : "false"));
    if (!allowed)
      tx.exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + dbname +
              "' AND pid <> pg_backend_pid()");
  };
  other.reset();
  conn.reset();
  set_connections(false);
  auto down = r.get("/v3/movements");
  BOOST_TEST(down.status == 503, down.body);
  BOOST_TEST(error_code(down.body) == "unavailable");
  auto still_down = client(creator).post("/v3/movements", create_body("during-outage"));
  BOOST_TEST(still_down.status == 503, still_down.body);
  set_connections(true);
  bool back = false;
  for (int i = 0; i < 100 && !back; ++i) {
    back = r.get("/v3/movements").status == 200;
    if (!back)
      std::this_thread::sleep_for(100ms);
  }
  BOOST_TEST(back);
  BOOST_TEST(client(creator).post("/v3/movements", create_body("after-outage")).status == 201);
  BOOST_TEST(server->running());
}

BOOST_FIXTURE_TEST_CASE(admin_listener_health_readiness_and_workers, api_fixture) {
  start();
  test::api_client a(admin_port, "", "");
  test::request_options none;
  none.sign = false;
  BOOST_TEST(a.get("/healthz", none).status == 200);
  bool ready = false;
  for (int i = 0; i < 1200 && !ready; ++i) {
    ready = a.get("/readyz", none).status == 200;
    if (!ready)
      std::this_thread::sleep_for(50ms);
  }
  BOOST_TEST(ready);
  BOOST_TEST(a.get("/admin/workers", none).status == 401);
  test::request_options bearer = none;
  bearer.headers = {{"Authorization", "Bearer " + admin_token}};
  auto workers = a.get("/admin/workers", bearer);
  BOOST_TEST(workers.status == 200);
  for (auto* w : {"node_dispatcher", "node_observer", "node_recovery", "expiration_checker",
                  "audit_outbox_promoter", "executor_health", "template_proposal_expiration",
                  "callback_dispatcher"})
    BOOST_TEST(workers.body.find(w) != std::string::npos, w);
  BOOST_TEST(workers.body.find(admin_token) == std::string::npos);
  // Served without MG_CALLBACK_SECRET: the dispatcher runs and says why it
  // sends nothing.
  bool said = false;
  for (int i = 0; i < 600 && !said; ++i) {
    said = a.get("/admin/workers", bearer).body.find("MG_CALLBACK_SECRET is not set") !=
           std::string::npos;
    if (!said)
      std::this_thread::sleep_for(100ms);
  }
  BOOST_TEST(said, a.get("/admin/workers", bearer).body);
}

BOOST_AUTO_TEST_SUITE_END()
