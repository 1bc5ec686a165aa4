// Catalog calls on the real database: templates, template proposals,
// executors, signers and expected identities — every call allowed and
// refused with its status, one audit row per success and none per refusal,
// the signer posture derived on read.
#include <boost/test/unit_test.hpp>

#include <map>
#include <string>

#include "domain/json.hpp"
#include "services/catalog_service.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;
using namespace mg::test;

namespace {

struct catalog_fixture : db_fixture {
  db::connection_pool pool{url, 2};
  services::service_context sc{pool, settings, ctx->plans, {}};
  services::catalog_service svc{sc};
  api::caller alice{"alice", {api::scope::admin, api::scope::read}};
  api::caller bob{"bob", {api::scope::admin, api::scope::read}};

  long audits(const std::string& action = "") {
    return count("SELECT count(*) FROM audit_outbox" +
                 (action.empty() ? std::string() : " WHERE action = '" + action + "'"));
  }
};

json::document body(const std::string& text) {
  return json::parse_trusted(text, "test body");
}

json::document parsed(const api::reply& r) {
  return json::parse_trusted(r.body, "reply");
}

std::string plan_of(const std::string& key, int version = 1, const std::string& extra_node = "") {
  return R"({"template_key": ")" + key + R"(", "version": )" + std::to_string(version) +
         R"(, "nodes": [{"node_key": "a", "action_type": "step", "executor_key": "sim"})" +
         extra_node + R"(], "edges": []})";
}

std::string propose_body(const std::string& key, const std::string& plan) {
  return R"({"template_key": ")" + key + R"(", "plan": )" + plan + "}";
}

/// Proposes as alice; returns the new proposal's id.
std::string propose(catalog_fixture& f, const std::string& key, const std::string& plan) {
  auto r = f.svc.propose_template(f.alice, body(propose_body(key, plan)));
  BOOST_REQUIRE_EQUAL(r.status, 201);
  return json::get_string(parsed(r), "id");
}

} // namespace

BOOST_AUTO_TEST_SUITE(catalog_service)

BOOST_FIXTURE_TEST_CASE(templates_list_latest_versions_by_key_with_a_cursor, catalog_fixture) {
  add_template(plan_of("k1", 1));
  add_template(plan_of("k1", 2, R"(, {"node_key": "b", "action_type": "step"})"));
  add_template(plan_of("k2", 1));
  add_template(plan_of("k3", 1));
  services::list_query q;
  q.limit = "2";
  auto r = svc.list_templates(bob, q);
  BOOST_TEST(r.status == 200);
  auto page = parsed(r);
  BOOST_REQUIRE(page["items"].Size() == 2u);
  BOOST_TEST(json::get_string(page["items"][0], "template_key") == "k1");
  BOOST_TEST(page["items"][0]["version"].GetInt() == 2);
  BOOST_TEST(json::get_string(page["items"][1], "template_key") == "k2");
  BOOST_REQUIRE(page["next_cursor"].IsString());
  q.cursor = page["next_cursor"].GetString();
  auto rest = parsed(svc.list_templates(bob, q));
  BOOST_REQUIRE(rest["items"].Size() == 1u);
  BOOST_TEST(json::get_string(rest["items"][0], "template_key") == "k3");
  BOOST_TEST(rest["next_cursor"].IsNull());

  auto one = svc.get_template(bob, "k1");
  BOOST_TEST(one.status == 200);
  auto versions = parsed(one);
  BOOST_TEST(versions["latest_version"].GetInt() == 2);
  BOOST_REQUIRE(versions["versions"].Size() == 2u);
  BOOST_TEST(versions["versions"][0]["version"].GetInt() == 2);
  BOOST_TEST(versions["versions"][1]["version"].GetInt() == 1);
  BOOST_TEST(versions["versions"][1]["plan"]["nodes"].Size() == 1u);

  BOOST_TEST(svc.get_template(bob, "nope").status == 404);
  services::list_query bad;
  bad.limit = "0";
  BOOST_TEST(svc.list_templates(bob, bad).status == 400);
  bad.limit = "201";
  BOOST_TEST(svc.list_templates(bob, bad).status == 400);
  bad = {};
  bad.cursor = "zz";
  BOOST_TEST(svc.list_templates(bob, bad).status == 400);
  BOOST_TEST(audits() == 0); // reads write nothing
}

BOOST_FIXTURE_TEST_CASE(proposal_is_refused_400_then_422_with_every_compile_error,
                        catalog_fixture) {
  auto status = [&](const std::string& text) {
    return svc.propose_template(alice, body(text)).status;
  };
  BOOST_TEST(status("[]") == 400);
  BOOST_TEST(status(R"({"template_key": "k"})") == 400);
  BOOST_TEST(status(R"({"plan": {}})") == 400);
  BOOST_TEST(status(R"({"template_key": 7, "plan": {}})") == 400);
  BOOST_TEST(status(R"({"template_key": "k", "plan": []})") == 400);
  BOOST_TEST(status(propose_body("k", plan_of("k")).replace(0, 1, R"({"extra": 1,)")) == 400);

  // Duplicate node keys and an edge to an unknown node: both listed.
  auto broken = R"({"template_key": "k", "nodes": [{"node_key": "a", "action_type": "s"},
    {"node_key": "a", "action_type": "s"}], "edges": [["a", "ghost"]]})";
  auto r = svc.propose_template(alice, body(propose_body("k", broken)));
  BOOST_TEST(r.status == 422);
  auto reply_doc = parsed(r);
  auto details = reply_doc["error"]["details"].GetArray();
  BOOST_TEST(details.Size() >= 2u);
  for (auto& d : details)
    BOOST_TEST(std::string(d["field"].GetString()).rfind("plan.", 0) == 0u);
  // The plan's own key must be the proposal's.
  auto other = svc.propose_template(alice, body(propose_body("k", plan_of("other"))));
  BOOST_TEST(other.status == 422);
  BOOST_TEST(other.body.find("plan.template_key") != std::string::npos);
  BOOST_TEST(audits() == 0);
  BOOST_TEST(count("SELECT count(*) FROM template_proposals") == 0);
}

BOOST_FIXTURE_TEST_CASE(proposal_is_created_pending_with_its_expiry_and_audited, catalog_fixture) {
  settings.template_proposal_ttl_seconds = 600;
  auto r = svc.propose_template(alice, body(propose_body("k", plan_of("k"))));
  BOOST_TEST(r.status == 201);
  auto p = parsed(r);
  BOOST_TEST(json::get_string(p, "state") == "pending");
  BOOST_TEST(json::get_string(p, "template_key") == "k");
  BOOST_TEST(json::get_string(p, "proposed_by") == "alice");
  BOOST_TEST(p["reviewed_by"].IsNull());
  auto id = json::get_string(p, "id");
  BOOST_TEST(count("SELECT count(*) FROM template_proposals WHERE id = '" + id +
                   "' AND expires_at BETWEEN now() + interval '590 seconds'"
                   " AND now() + interval '610 seconds'") == 1);
  BOOST_TEST(audits("template_proposal.create") == 1);
  BOOST_TEST(count("SELECT count(*) FROM audit_outbox WHERE actor = 'alice'"
                   " AND subject = 'template_proposal:" +
                   id + "'") == 1);
  BOOST_TEST(count("SELECT count(*) FROM templates") == 0); // nothing published yet
}

BOOST_FIXTURE_TEST_CASE(approval_publishes_the_next_version_under_four_eyes, catalog_fixture) {
  add_template(plan_of("k", 1));
  // The plan claims version 7: publication takes latest + 1 regardless.
  auto id = propose(*this, "k", plan_of("k", 7, R"(, {"node_key": "b", "action_type": "step"})"));
  long before = audits();

  auto own = svc.approve_proposal(alice, id, body("{}"));
  BOOST_TEST(own.status == 403);
  BOOST_TEST(svc.approve_proposal(bob, id, body(R"({"extra": true})")).status == 400);
  BOOST_TEST(svc.approve_proposal(bob, "not-a-uuid", body("{}")).status == 404);
  BOOST_TEST(svc.approve_proposal(bob, "00000000-0000-0000-0000-000000000000", body("{}")).status ==
             404);
  BOOST_TEST(audits() == before);

  auto r = svc.approve_proposal(bob, id, body("{}"));
  BOOST_TEST(r.status == 200);
  auto p = parsed(r);
  BOOST_TEST(json::get_string(p, "state") == "approved");
  BOOST_TEST(json::get_string(p, "reviewed_by") == "bob");
  BOOST_TEST(p["published_version"].GetInt() == 2);
  BOOST_TEST(count("SELECT count(*) FROM templates WHERE template_key = 'k' AND version = 2"
                   " AND plan->>'version' = '2' AND jsonb_array_length(plan->'nodes') = 2") == 1);
  BOOST_TEST(count("SELECT count(*) FROM templates WHERE version = 7") == 0);
  BOOST_TEST(audits("template_proposal.approve") == 1);
  BOOST_TEST(audits() == before + 1);

  // Not pending any more.
  BOOST_TEST(svc.approve_proposal(bob, id, body("{}")).status == 409);
  BOOST_TEST(svc.reject_proposal(bob, id, body("{}")).status == 409);
  BOOST_TEST(audits() == before + 1);
}

BOOST_FIXTURE_TEST_CASE(approval_of_an_expired_proposal_is_409_and_changes_nothing,
                        catalog_fixture) {
  auto id = propose(*this, "k", plan_of("k"));
  exec("UPDATE template_proposals SET expires_at = now() - interval '1 second'");
  auto r = svc.approve_proposal(bob, id, body("{}"));
  BOOST_TEST(r.status == 409);
  BOOST_TEST(scalar("SELECT state FROM template_proposals") == "pending");
  BOOST_TEST(count("SELECT count(*) FROM templates") == 0);
  BOOST_TEST(audits() == 1); // the proposal's own
  // The first approval of a new key is version 1.
  auto fresh = propose(*this, "k", plan_of("k", 3));
  BOOST_TEST(parsed(svc.approve_proposal(bob, fresh, body("{}")))["published_version"].GetInt() ==
             1);
}

BOOST_FIXTURE_TEST_CASE(rejection_closes_a_pending_proposal, catalog_fixture) {
  auto id = propose(*this, "k", plan_of("k"));
  BOOST_TEST(svc.reject_proposal(bob, id, body(R"({"reason": 5})")).status == 400);
  BOOST_TEST(svc.reject_proposal(bob, id, body(R"({"why": "x"})")).status == 400);
  BOOST_TEST(svc.reject_proposal(bob, "x", body("{}")).status == 404);
  BOOST_TEST(svc.reject_proposal(bob, "6f1c1f5e-8a5b-4c55-9f58-1d1d1d1d1d1d", body("{}")).status ==
             404);
  auto r = svc.reject_proposal(bob, id, body(R"({"reason": "not now"})"));
  BOOST_TEST(r.status == 200);
  BOOST_TEST(json::get_string(parsed(r), "state") == "rejected");
  BOOST_TEST(audits("template_proposal.reject") == 1);
  BOOST_TEST(count("SELECT count(*) FROM audit_outbox WHERE detail->>'reason' = 'not now'") == 1);
  BOOST_TEST(svc.reject_proposal(bob, id, body("{}")).status == 409);
  BOOST_TEST(svc.approve_proposal(bob, id, body("{}")).status == 409);
  BOOST_TEST(audits() == 2);
}

BOOST_FIXTURE_TEST_CASE(executors_are_listed_per_process, catalog_fixture) {
  exec("INSERT INTO executors VALUES ('sim', 'n1', 'up', now()), ('sim', 'n2', 'down', NULL)");
  auto r = svc.list_executors(bob);
  BOOST_TEST(r.status == 200);
  auto reply_doc = parsed(r);
  auto items = reply_doc["items"].GetArray();
  BOOST_REQUIRE(items.Size() == 2u);
  BOOST_TEST(json::get_string(items[0], "runtime_node") == "n1");
  BOOST_TEST(json::get_string(items[0], "health_state") == "up");
  BOOST_TEST(items[0]["last_health_checked_at"].IsString());
  BOOST_TEST(json::get_string(items[1], "health_state") == "down");
  BOOST_TEST(items[1]["last_health_checked_at"].IsNull());
  BOOST_TEST(audits() == 0);
}

BOOST_FIXTURE_TEST_CASE(signer_posture_is_derived_on_read, catalog_fixture) {
  const std::string a = "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
  const std::string b = "0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
  exec("INSERT INTO signers (signer_key, runtime_node, health_state, observed_signer_address,"
       " status) VALUES"
       " ('match', 'n1', 'up', '" +
       a +
       "', 'active'),"
       " ('match', 'n2', 'down', '" +
       b +
       "', 'orphan')," // orphan rows do not count
       " ('mismatch', 'n1', 'up', '" +
       a +
       "', 'active'),"
       " ('mismatch', 'n2', 'up', '" +
       b +
       "', 'active'),"
       " ('unobserved', 'n1', 'up', NULL, 'active'),"
       " ('unenrolled', 'n1', 'up', '" +
       a +
       "', 'active'),"
       " ('orphan', 'n1', 'up', NULL, 'orphan')");
  exec("INSERT INTO signer_identities VALUES ('match', '" + a + "'), ('mismatch', '" + a +
       "'), ('unobserved', '" + a + "'), ('orphan', '" + a + "')");
  auto r = svc.list_signers(bob);
  BOOST_TEST(r.status == 200);
  std::map<std::string, std::string> posture;
  auto doc = parsed(r);
  for (auto& s : doc["items"].GetArray())
    posture[s["signer_key"].GetString()] = s["posture"].GetString();
  BOOST_TEST(posture.size() == 5u);
  BOOST_TEST(posture["match"] == "match");
  BOOST_TEST(posture["mismatch"] == "mismatch");
  BOOST_TEST(posture["unobserved"] == "mismatch");
  BOOST_TEST(posture["unenrolled"] == "unenrolled");
  BOOST_TEST(posture["orphan"] == "orphan");
  BOOST_TEST(doc["items"][0]["processes"].Size() == 2u);
  BOOST_TEST(audits() == 0);
}

BOOST_FIXTURE_TEST_CASE(expected_identity_is_enrolled_lower_cased_for_a_known_signer,
                        catalog_fixture) {
  exec("INSERT INTO signers (signer_key, runtime_node, health_state, observed_signer_address)"
       " VALUES ('local', 'n1', 'up', '0xabcdef0123456789abcdef0123456789abcdef01')");
  const std::string mixed = R"({"address": "0xABCDEF0123456789abcdef0123456789ABCDEF01"})";
  BOOST_TEST(svc.put_expected_identity(alice, "local", body("[]")).status == 400);
  BOOST_TEST(svc.put_expected_identity(alice, "local", body("{}")).status == 400);
  BOOST_TEST(svc.put_expected_identity(alice, "local", body(R"({"address": 1})")).status == 400);
  BOOST_TEST(svc.put_expected_identity(
                    alice, "local",
                    body(R"({"address": "0xabcdef0123456789abcdef0123456789abcdef01", "x": 1})"))
                 .status == 400);
  // 400 is checked before 404.
  BOOST_TEST(svc.put_expected_identity(alice, "ghost", body("{}")).status == 400);
  BOOST_TEST(svc.put_expected_identity(alice, "ghost", body(mixed)).status == 404);
  for (auto* bad :
       {"0x1234", "abcdef0123456789abcdef0123456789abcdef0123",
        "0xabcdef0123456789abcdef0123456789abcdef0g", "0Xabcdef0123456789abcdef0123456789abcdef01"})
    BOOST_TEST(svc.put_expected_identity(alice, "local",
                                         body(std::string(R"({"address": ")") + bad + "\"}"))
                   .status == 422);
  BOOST_TEST(audits() == 0);
  BOOST_TEST(count("SELECT count(*) FROM signer_identities") == 0);

  auto r = svc.put_expected_identity(alice, "local", body(mixed));
  BOOST_TEST(r.status == 200);
  auto s = parsed(r);
  BOOST_TEST(json::get_string(s, "expected_signer_address") ==
             "0xabcdef0123456789abcdef0123456789abcdef01");
  BOOST_TEST(json::get_string(s, "posture") == "match");
  BOOST_TEST(scalar("SELECT expected_signer_address FROM signer_identities"
                    " WHERE signer_key = 'local'") == "0xabcdef0123456789abcdef0123456789abcdef01");
  BOOST_TEST(audits("signer.expected_identity") == 1);
  // Enrolling another address replaces it: the posture turns to mismatch.
  auto again = svc.put_expected_identity(
      alice, "local", body(R"({"address": "0x1111111111111111111111111111111111111111"})"));
  BOOST_TEST(json::get_string(parsed(again), "posture") == "mismatch");
  BOOST_TEST(count("SELECT count(*) FROM signer_identities") == 1);
  BOOST_TEST(audits() == 2);
}

BOOST_AUTO_TEST_SUITE_END()
