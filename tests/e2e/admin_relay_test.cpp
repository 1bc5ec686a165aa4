// The admin listener's /relay/v3/... against a real `movegate serve`: a
// relayed call is answered exactly as the same call on the /v3 port
// (signature, nonce, scopes, four-eyes, audit), it needs the admin token as
// well, and nothing but /v3 paths is reachable through it.
#include <boost/test/unit_test.hpp>

#include "domain/api_auth.hpp"
#include "tests/e2e/ops_serve_fixture.hpp"

using namespace mg;
using namespace mg::test::ops;

namespace {

long long unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct relay_fixture : ops_fixture {
  relay_fixture() { keys.push_back(creator_approver); }

  /// `v3_target` signed by `k` as SPEC §5 says and sent to /relay + target.
  /// `sent_body` (default: the signed body) lets a test tamper with it.
  test::api_reply relay(const test::api_key_spec& k, const std::string& method,
                        const std::string& v3_target, const std::string& body,
                        std::optional<std::string> sent_body = std::nullopt, bool bearer = true) {
    test::request_options o = signed_for(k, method, v3_target, body);
    if (bearer)
      o.headers.emplace_back("Authorization", "Bearer " + admin_token);
    return test::api_client(admin_port, k.id, k.secret)
        .request(method, "/relay" + v3_target, sent_body.value_or(body), o);
  }

  /// Unsigned, with the admin token only.
  test::api_reply relay_unsigned(const std::string& method, const std::string& target,
                                 const std::string& body = "") {
    test::request_options o;
    o.sign = false;
    o.headers = {{"Authorization", "Bearer " + admin_token}};
    return test::api_client(admin_port, "", "").request(method, target, body, o);
  }

  test::request_options signed_for(const test::api_key_spec& k, const std::string& method,
                                   const std::string& v3_target, const std::string& body) {
    const auto q = v3_target.find('?');
    const std::string path = v3_target.substr(0, q);
    const std::string query = q == std::string::npos ? "" : v3_target.substr(q + 1);
    test::request_options o;
    o.timestamp = std::to_string(unix_now());
    o.nonce = test::new_nonce();
    o.signature = api::sign_request(k.secret, method, path, query, body, *o.timestamp, *o.nonce);
    return o;
  }

  std::string request_state(const std::string& id) {
    return scalar("SELECT request_state FROM movement_requests WHERE id = '" + id + "'");
  }

  std::string create_by(const test::api_key_spec& k, const std::string& idem) {
    auto created = client(k).post("/v3/movements",
                                  R"({"template_key": "ops_chain", "intent": {"asset": "USDC",
          "amount": "5"}, "idempotency_key": ")" +
                                      idem + "\"}");
    BOOST_REQUIRE_MESSAGE(created.status == 201, created.body);
    return field(created.body, "id");
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(admin_relay)

BOOST_FIXTURE_TEST_CASE(relayed_calls_are_refused_and_allowed_exactly_as_on_v3, relay_fixture) {
  start();
  auto id = create_by(creator_approver, "relay-1");
  const std::string approve = "/v3/movements/" + id + "/approve";
  test::request_options unsigned_call;
  unsigned_call.sign = false;

  // Unsigned: the same 401 and body as /v3 itself.
  auto direct = client(approver).post(approve, "{}", unsigned_call);
  auto relayed = relay_unsigned("POST", "/relay" + approve, "{}");
  BOOST_TEST(direct.status == 401);
  BOOST_TEST(relayed.status == 401);
  BOOST_TEST(relayed.body == direct.body);

  // Tampered: signed over "{}", sent with another body.
  const std::string other = R"({"approver_id": "mallory"})";
  auto direct_tampered =
      test::api_client(api_port, approver.id, approver.secret)
          .request("POST", approve, other, signed_for(approver, "POST", approve, "{}"));
  auto relayed_tampered = relay(approver, "POST", approve, "{}", other);
  BOOST_TEST(direct_tampered.status == 401);
  BOOST_TEST(relayed_tampered.status == 401);
  BOOST_TEST(relayed_tampered.body == direct_tampered.body);
  BOOST_TEST(relayed_tampered.body.find("bad signature") != std::string::npos);

  // A valid signature without the admin token: the listener refuses it.
  auto no_bearer = relay(approver, "POST", approve, "{}", std::nullopt, false);
  BOOST_TEST(no_bearer.status == 401);
  BOOST_TEST(no_bearer.header("WWW-Authenticate") == "Bearer");

  // Scope and four-eyes: answered as /v3 answers them.
  auto no_scope = relay(creator, "POST", approve, "{}");
  BOOST_TEST(no_scope.status == 403);
  BOOST_TEST(no_scope.body.find("scope") != std::string::npos);
  auto self_approval = relay(creator_approver, "POST", approve, "{}");
  auto self_direct = client(creator_approver).post(approve, "{}");
  BOOST_TEST(self_approval.status == 403);
  BOOST_TEST(self_approval.body == self_direct.body);
  BOOST_TEST(request_state(id) == "PENDING_APPROVAL");
  BOOST_TEST(count("SELECT count(*) FROM audit_outbox WHERE action = 'approve'") == 0);

  // A second key's signed approval goes through, audited like /v3's.
  auto opts = signed_for(approver, "POST", approve, "{}");
  opts.headers.emplace_back("Authorization", "Bearer " + admin_token);
  test::api_client relay_client(admin_port, approver.id, approver.secret);
  auto approved = relay_client.request("POST", "/relay" + approve, "{}", opts);
  BOOST_TEST_REQUIRE(approved.status == 200, approved.body);
  BOOST_TEST(field(approved.body, "request_state") == "APPROVED");
  BOOST_TEST(count("SELECT count(*) FROM audit_outbox WHERE action = 'approve'"
                   " AND actor = 'ops-approver' AND subject = 'movement:" +
                   id + "'") == 1);

  // Its nonce is spent for both doors: replays fail on the relay and on /v3.
  BOOST_TEST(relay_client.request("POST", "/relay" + approve, "{}", opts).status == 401);
  auto replay_direct =
      test::api_client(api_port, approver.id, approver.secret).request("POST", approve, "{}", opts);
  BOOST_TEST(replay_direct.status == 401);
  BOOST_TEST(replay_direct.body.find("replayed nonce") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(relay_forwards_only_v3_paths_with_v3_body_limits, relay_fixture) {
  start();
  create_by(creator, "relay-2");
  // A signed list with a query: the query reaches /v3 and is signed as sent.
  auto listed = relay(approver, "GET", "/v3/movements?limit=1&state=PENDING_APPROVAL", "");
  BOOST_TEST_REQUIRE(listed.status == 200, listed.body);
  BOOST_TEST(listed.body.find("\"items\"") != std::string::npos);

  // Nothing outside /v3: not the API's unsigned documents, not the admin
  // listener's own routes, not a path that only decodes to /v3.
  BOOST_TEST(client(approver).get("/openapi.json").status == 200);
  for (const char* target :
       {"/relay/openapi.json", "/relay/admin/workers", "/relay/healthz", "/relay/%76%33/movements",
        "/relay/v3x/movements", "/relay/", "/relay//v3/movements"}) {
    auto r = relay_unsigned("GET", target);
    BOOST_TEST(r.status == 404, target << " answered " << r.status << " " << r.body);
  }
  // Signed dot segments are not resolved into another route.
  auto dots = relay(approver, "GET", "/v3/../admin/workers", "");
  BOOST_TEST(dots.status == 404);
  BOOST_TEST(dots.body.find("heartbeats") == std::string::npos);

  // Bodies as on /v3: 900 KiB reaches the API (answered for its content,
  // not its size), over 1 MiB is 413; other admin routes keep 64 KiB.
  const std::string big = "{\"x\": \"" + std::string(900 * 1024, 'a') + "\"}";
  auto large = relay(creator, "POST", "/v3/movements", big);
  BOOST_TEST(large.status == 400, large.body.substr(0, 300));
  auto too_large = relay_unsigned("POST", "/relay/v3/movements",
                                  "{\"x\": \"" + std::string(1024 * 1024, 'a') + "\"}");
  BOOST_TEST(too_large.status == 413);
  auto admin_large =
      relay_unsigned("POST", "/admin/callbacks/" + std::string(36, '0') + "/redeliver",
                     std::string(100 * 1024, ' '));
  BOOST_TEST(admin_large.status == 413);
}

BOOST_AUTO_TEST_SUITE_END()
