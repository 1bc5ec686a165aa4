// The movement calls of the /v3 API (SPEC §5) on the real database, called
// directly as a service: create with dedup and risk limits, reads with
// keyset pagination, and every row of the operator-transition table,
// allowed and refused (a refusal changes nothing and writes no audit row).
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "actors/workers/node_dispatcher.hpp"
#include "domain/json.hpp"
#include "persistence/connection_pool.hpp"
#include "services/movement_service.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;
using namespace mg::test;

namespace {

const api::caller alice{"alice", {api::scope::create, api::scope::read}};
const api::caller bob{"bob", {api::scope::approve, api::scope::read}};
const api::caller carol{"carol", {api::scope::approve}};

const char* capped_template = R"({"template_key": "capped", "version": 1,
  "risk_controls": {"max_amount": "250000"},
  "nodes": [{"node_key": "a", "action_type": "chain_transfer", "executor_key": "sim",
             "side_effect": true}]})";

const char* manual_template = R"({"template_key": "manual", "version": 1,
  "nodes": [{"node_key": "m", "action_type": "manual_confirm", "executor_key": "sim"},
            {"node_key": "b", "action_type": "chain_transfer", "executor_key": "sim"}],
  "edges": [["m", "b"]]})";

struct service_fixture : db_fixture {
  db::connection_pool pool{url, 4};
  std::mutex changed_mutex;
  std::vector<std::string> changed;
  std::vector<bool> reconciled;          // per announced change: its transaction reconciled it
  std::vector<std::optional<int>> ready; // per announced change: nodes it made READY
  services::service_context sctx{pool, settings, ctx->plans,
                                 [this](const std::string& id, domain::request_change change) {
                                   std::lock_guard<std::mutex> lock(changed_mutex);
                                   changed.push_back(id);
                                   reconciled.push_back(change.reconciled);
                                   ready.push_back(change.ready_nodes);
                                 },
                                 &ctx->providers};
  services::movement_service svc{sctx};
  json::document empty;

  service_fixture() {
    empty.SetObject();
    add_template(capped_template);
    add_template(manual_template);
    add_template(one_node("solo"));
  }

  static json::document body(const std::string& text) {
    return json::parse_trusted(text, "test body");
  }

  static std::string create_body(const std::string& key, const std::string& idem,
                                 const std::string& amount = "10") {
    return R"({"template_key": ")" + key + R"(", "intent": {"asset": "USDC", "amount": ")" +
           amount + R"("}, "idempotency_key": ")" + idem + R"("})";
  }

  api::reply create_via(const std::string& key, const std::string& idem,
                        const std::string& amount = "10") {
    return svc.create(alice, body(create_body(key, idem, amount)));
  }

  /// Creates through the service; returns the id.
  std::string make(const std::string& key, const std::string& idem = "") {
    static int n = 0;
    auto r = create_via(key, idem.empty() ? "k-" + std::to_string(++n) : idem);
    BOOST_REQUIRE_EQUAL(r.status, 201);
    return body(r.body)["id"].GetString();
  }

  std::string made_and_approved(const std::string& key) {
    auto id = make(key);
    BOOST_REQUIRE_EQUAL(svc.approve(bob, id, empty).status, 200);
    return id;
  }

  /// Everything a call could change for a request, as text.
  std::string rows(const std::string& id) {
    auto w = "'" + id + "'";
    return scalar("SELECT row_to_json(r)::text FROM movement_requests r WHERE id = " + w) + "|" +
           scalar("SELECT json_agg(n ORDER BY position)::text FROM movement_request_nodes n"
                  " WHERE request_id = " +
                  w) +
           "|" + scalar("SELECT count(*) FROM movement_events WHERE request_id = " + w) + "|" +
           scalar("SELECT count(*) FROM movement_callback_outbox WHERE request_id = " + w) + "|" +
           scalar("SELECT count(*) FROM node_artifacts") + "|" + audits();
  }

  std::string audits() { return scalar("SELECT count(*) FROM audit_outbox"); }
  long audits_for(const std::string& id, const std::string& action) {
    return count("SELECT count(*) FROM audit_outbox WHERE subject = 'movement:" + id +
                 "' AND action = '" + action + "'");
  }
  long events_of(const std::string& id, const std::string& type) {
    return count("SELECT count(*) FROM movement_events WHERE request_id = '" + id +
                 "' AND event_type = '" + type + "'");
  }
  void set_state(const std::string& id, const std::string& state) {
    exec("UPDATE movement_requests SET request_state = '" + state + "' WHERE id = '" + id + "'");
  }
  void set_node(const std::string& id, const std::string& node_key, const std::string& set) {
    exec("UPDATE movement_request_nodes SET " + set + " WHERE request_id = '" + id +
         "' AND node_key = '" + node_key + "'");
  }
  std::string state(const std::string& id) { return request_col(*this, id, "request_state"); }

  /// Calls `call` and checks it is refused with `status` and changes nothing.
  template <class Call>
  void refused(const std::string& id, int status, Call&& call, const std::string& what = "") {
    auto before = rows(id);
    auto r = call();
    BOOST_TEST(r.status == status, what << ": " << r.body);
    BOOST_TEST(rows(id) == before, what);
  }
};

/// An UNKNOWN attempt 1 of node `key`, UNKNOWN for `seconds_ago`.
void make_unknown(service_fixture& f, const std::string& id, const std::string& key,
                  int seconds_ago, const std::string& request_state = "EXECUTING") {
  f.exec("UPDATE movement_requests SET request_state = '" + request_state +
         "', dispatch_paused = true WHERE id = '" + id + "'");
  auto ago = "now() - interval '" + std::to_string(seconds_ago) + " seconds'";
  f.set_node(id, key,
             "node_state = 'UNKNOWN', attempt_no = 1, idempotency_key = id || ':1',"
             " claim_token = gen_random_uuid(), started_at = " +
                 ago + ", claimed_at = " + ago + ", unknown_since = " + ago +
                 ", ever_submitted = true");
}

void accept_in_ledger(service_fixture& f, const std::string& id, const std::string& key) {
  f.exec("INSERT INTO sim_ledger (idempotency_key, node_id, attempt_no, action_type)"
         " SELECT id || ':1', id, 1, action_type FROM movement_request_nodes WHERE request_id = '" +
         id + "' AND node_key = '" + key + "'");
}

/// Counts NOTIFYs on the dispatchers' channel.
struct dispatch_listener : pqxx::notification_receiver {
  int received = 0;
  explicit dispatch_listener(pqxx::connection_base& c)
      : pqxx::notification_receiver(c, db::dispatch_channel) {}
  void operator()(const std::string&, int) override { ++received; }
};

const std::vector<std::string> all_states = {"PENDING_APPROVAL",
                                             "APPROVED",
                                             "EXECUTING",
                                             "WAITING_MANUAL_ACTION",
                                             "MANUAL_INTERVENTION",
                                             "COMPLETED",
                                             "FAILED",
                                             "REJECTED",
                                             "EXPIRED",
                                             "CANCELLED"};

} // namespace

BOOST_AUTO_TEST_SUITE(movement_service)

// --- create -------------------------------------------------------------------

BOOST_FIXTURE_TEST_CASE(create_answers_201_then_200_for_same_body_and_409_for_another,
                        service_fixture) {
  auto r = create_via("capped", "order-1");
  BOOST_TEST_REQUIRE(r.status == 201);
  auto b = body(r.body);
  std::string id = b["id"].GetString();
  BOOST_TEST(b["deduplicated"].GetBool() == false);
  BOOST_TEST(b["request_state"].GetString() == std::string("PENDING_APPROVAL"));
  BOOST_TEST(b["approval_status"].GetString() == std::string("pending"));
  BOOST_TEST(b["intent"]["amount"].GetString() == std::string("10")); // a string, never a float
  BOOST_TEST(b["nodes"].Size() == 1u);
  BOOST_TEST(b["nodes"][0]["node_state"].GetString() == std::string("BLOCKED"));
  BOOST_TEST(request_col(*this, id, "created_by") == "alice");
  // expires_at = now + MG_APPROVAL_TTL_SECONDS (default 300).
  auto ttl = std::stod(request_col(*this, id, "extract(epoch FROM expires_at - created_at)"));
  BOOST_TEST(ttl == settings.approval_ttl_seconds, boost::test_tools::tolerance(2.0));
  BOOST_TEST(audits_for(id, "create") == 1);
  BOOST_TEST(events_of(id, "request_created") == 1);
  BOOST_TEST(changed == std::vector<std::string>{id});
  BOOST_TEST(reconciled == std::vector<bool>{false}); // its movement actor reconciles

  // Same body, members in another order and other whitespace.
  auto again = svc.create(alice, body(R"({"idempotency_key": "order-1",
      "intent": {"amount": "10", "asset": "USDC"}, "template_key": "capped"})"));
  BOOST_TEST(again.status == 200);
  BOOST_TEST(body(again.body)["deduplicated"].GetBool() == true);
  BOOST_TEST(body(again.body)["id"].GetString() == id);

  auto other = create_via("capped", "order-1", "11");
  BOOST_TEST(other.status == 409);
  BOOST_TEST(count("SELECT count(*) FROM movement_requests") == 1);
  BOOST_TEST(audits() == "1");
  BOOST_TEST(changed.size() == 1u);
}

BOOST_FIXTURE_TEST_CASE(risk_limit_is_inclusive, service_fixture) {
  BOOST_TEST(create_via("capped", "at-limit", "250000").status == 201);
  BOOST_TEST(create_via("capped", "at-limit-2", "250000.000000").status == 201);
  auto over = create_via("capped", "over", "250000.000001");
  BOOST_TEST(over.status == 422);
  BOOST_TEST(over.body.find("intent.amount") != std::string::npos);
  BOOST_TEST(create_via("capped", "way-over", std::string(78, '9')).status == 422);
  BOOST_TEST(count("SELECT count(*) FROM movement_requests") == 2);
  BOOST_TEST(audits() == "2");
}

BOOST_FIXTURE_TEST_CASE(unknown_template_or_version_is_422, service_fixture) {
  BOOST_TEST(create_via("nope", "x1").status == 422);
  auto r = svc.create(alice, body(R"({"template_key": "solo", "template_version": 7,
      "intent": {"asset": "USDC", "amount": "1"}, "idempotency_key": "x2"})"));
  BOOST_TEST(r.status == 422);
  auto ok = svc.create(alice, body(R"({"template_key": "solo", "template_version": 1,
      "intent": {"asset": "USDC", "amount": "1"}, "idempotency_key": "x3"})"));
  BOOST_TEST(ok.status == 201);
  BOOST_TEST(count("SELECT count(*) FROM movement_requests") == 1);
  BOOST_TEST(audits() == "1");
}

BOOST_FIXTURE_TEST_CASE(invalid_create_bodies_write_nothing, service_fixture) {
  BOOST_TEST(create_via("solo", "a1", "0").status == 422);
  BOOST_TEST(create_via("solo", "bad key").status == 422);
  BOOST_TEST(svc.create(alice, body(R"({"template_key": "solo"})")).status == 400);
  auto url = svc.create(alice, body(R"({"template_key": "solo", "idempotency_key": "u",
      "intent": {"asset": "A", "amount": "1"}, "callback_url": "http://127.0.0.1/cb"})"));
  BOOST_TEST(url.status == 422);
  BOOST_TEST(count("SELECT count(*) FROM movement_requests") == 0);
  BOOST_TEST(audits() == "0");
}

BOOST_FIXTURE_TEST_CASE(concurrent_creates_with_one_key_make_one_request, service_fixture) {
  auto a = std::async(std::launch::async, [&] { return create_via("solo", "same"); });
  auto b = std::async(std::launch::async, [&] { return create_via("solo", "same"); });
  auto ra = a.get(), rb = b.get();
  std::multiset<int> statuses{ra.status, rb.status};
  BOOST_TEST((statuses == std::multiset<int>{200, 201}), ra.body << " / " << rb.body);
  BOOST_TEST(audits() == "1");
  BOOST_TEST(count("SELECT count(*) FROM movement_requests") == 1);
}

// --- reads --------------------------------------------------------------------

BOOST_FIXTURE_TEST_CASE(get_answers_the_movement_object, service_fixture) {
  // Looked at again in 30 s: still in flight when read.
  add_template(
      one_node("later", "chain_transfer", R"("config": {"sim": {"retry_after_seconds": 30}})"));
  auto id = made_and_approved("later");
  workers::dispatch_pass(conn, engine());
  auto r = svc.get(alice, id);
  BOOST_TEST_REQUIRE(r.status == 200);
  auto b = body(r.body);
  for (auto field :
       {"id", "template_key", "template_version", "compiled_plan_hash", "request_state",
        "approval_status", "intent", "input_params", "current_frontier", "callback_url",
        "expires_at", "created_at", "updated_at", "nodes"})
    BOOST_TEST(b.HasMember(field), field);
  BOOST_TEST(b["request_state"].GetString() == std::string("EXECUTING"));
  auto& n = b["nodes"][0];
  for (auto field : {"node_key", "action_type", "node_state", "attempt_no", "provider_state",
                     "provider_refs", "error_code", "started_at", "updated_at", "artifacts"})
    BOOST_TEST(n.HasMember(field), field);
  BOOST_TEST(n["node_state"].GetString() == std::string("SUBMITTED"));
  BOOST_TEST(n["attempt_no"].GetInt() == 1);
  BOOST_TEST(n["artifacts"]["submit_proof"].GetInt() == 1);
  BOOST_TEST(n["artifacts"]["prepared_action"].GetInt() == 1);
  BOOST_TEST(b["current_frontier"][0].GetString() == std::string("a"));

  BOOST_TEST(svc.get(alice, "123e4567-e89b-12d3-a456-426614174000").status == 404);
  BOOST_TEST(svc.get(alice, "not-a-uuid").status == 404);
}

BOOST_FIXTURE_TEST_CASE(list_pages_have_no_duplicates_or_gaps, service_fixture) {
  std::set<std::string> made;
  for (int i = 0; i < 7; ++i)
    made.insert(make("solo", "list-" + std::to_string(i)));
  // Two of them share a created_at: the id breaks the tie.
  exec("UPDATE movement_requests SET created_at = (SELECT min(created_at) FROM"
       " movement_requests) WHERE idempotency_key IN ('list-3', 'list-5')");
  std::vector<std::string> seen;
  std::vector<size_t> sizes;
  services::list_query q{"", "3", ""};
  for (int page = 0; page < 5; ++page) {
    auto r = svc.list(alice, q);
    BOOST_TEST_REQUIRE(r.status == 200);
    auto b = body(r.body);
    sizes.push_back(b["items"].Size());
    for (auto& item : b["items"].GetArray())
      seen.push_back(item["id"].GetString());
    if (b["next_cursor"].IsNull())
      break;
    q.cursor = b["next_cursor"].GetString();
  }
  BOOST_TEST((sizes == std::vector<size_t>{3, 3, 1}));
  BOOST_TEST(seen.size() == 7u);
  BOOST_TEST((std::set<std::string>(seen.begin(), seen.end()) == made));

  // The state filter and the default limit.
  auto approved = *made.begin();
  BOOST_REQUIRE_EQUAL(svc.approve(bob, approved, empty).status, 200);
  auto filtered = body(svc.list(alice, {"APPROVED", "", ""}).body);
  BOOST_TEST(filtered["items"].Size() == 1u);
  BOOST_TEST(filtered["items"][0]["id"].GetString() == approved);
  BOOST_TEST(filtered["next_cursor"].IsNull());
  BOOST_TEST(body(svc.list(alice, {}).body)["items"].Size() == 7u);

  BOOST_TEST(svc.list(alice, {"BOGUS", "", ""}).status == 400);
  BOOST_TEST(svc.list(alice, {"", "0", ""}).status == 400);
  BOOST_TEST(svc.list(alice, {"", "201", ""}).status == 400);
  BOOST_TEST(svc.list(alice, {"", "x", ""}).status == 400);
  BOOST_TEST(svc.list(alice, {"", "", "nothex"}).status == 400);
  BOOST_TEST(svc.list(alice, {"", "", "abcd"}).status == 400);
}

BOOST_FIXTURE_TEST_CASE(events_list_the_timeline_with_audit_rows, service_fixture) {
  auto id = made_and_approved("solo");
  // Promoted audit rows stay listed once.
  exec("INSERT INTO audit_events (id, actor, action, subject, detail, occurred_at)"
       " SELECT id, actor, action, subject, detail, occurred_at FROM audit_outbox");
  exec("UPDATE audit_outbox SET promoted_at = now()");
  std::vector<std::string> kinds;
  std::set<std::string> ids;
  services::list_query q{"", "2", ""};
  for (int page = 0; page < 10; ++page) {
    auto r = svc.events(alice, id, q);
    BOOST_TEST_REQUIRE(r.status == 200);
    auto b = body(r.body);
    for (auto& item : b["items"].GetArray()) {
      ids.insert(item["id"].GetString());
      kinds.push_back(std::string(item["kind"].GetString()) + ":" +
                      (item.HasMember("event_type") ? item["event_type"].GetString()
                                                    : item["action"].GetString()));
    }
    if (b["next_cursor"].IsNull())
      break;
    q.cursor = b["next_cursor"].GetString();
  }
  auto expected = count("SELECT count(*) FROM movement_events WHERE request_id = '" + id + "'") +
                  2; // audit rows: create, approve
  BOOST_TEST(static_cast<long>(kinds.size()) == expected);
  BOOST_TEST(static_cast<long>(ids.size()) == expected);
  BOOST_TEST(kinds.front() == "event:request_created");
  BOOST_TEST(std::count(kinds.begin(), kinds.end(), "audit:create") == 1);
  BOOST_TEST(std::count(kinds.begin(), kinds.end(), "audit:approve") == 1);
  BOOST_TEST(std::count(kinds.begin(), kinds.end(), "event:request_approved") == 1);

  BOOST_TEST(svc.events(alice, "123e4567-e89b-12d3-a456-426614174000", {}).status == 404);
  BOOST_TEST(svc.events(alice, "nope", {}).status == 404);
  BOOST_TEST(svc.events(alice, "nope", {"", "0", ""}).status == 400); // 400 before 404
}

// --- approve ------------------------------------------------------------------

BOOST_FIXTURE_TEST_CASE(approve_pending_request, service_fixture) {
  auto id = make("solo");
  auto r = svc.approve(bob, id, body(R"({"approver_id": "bob the human"})"));
  BOOST_TEST_REQUIRE(r.status == 200);
  BOOST_TEST(state(id) == "APPROVED");
  BOOST_TEST(request_col(*this, id, "approval_status") == "approved");
  BOOST_TEST(request_col(*this, id, "approved_by") == "bob");
  BOOST_TEST(node_state(id, "a") == "READY");
  BOOST_TEST(body(r.body)["nodes"][0]["node_state"].GetString() == std::string("READY"));
  BOOST_TEST(events_of(id, "request_approved") == 1);
  BOOST_TEST(audits_for(id, "approve") == 1);
  BOOST_TEST(changed.back() == id);
  BOOST_TEST(reconciled.back());              // approved and reconciled in one transaction
  BOOST_TEST(ready.back().value_or(-1) == 1); // one dispatcher wakes for its one root
}

BOOST_FIXTURE_TEST_CASE(approve_refusals_change_nothing, service_fixture) {
  auto id = make("solo");
  // Four-eyes: the creating key may not approve (403 once the request is found).
  refused(
      id, 403, [&] { return svc.approve(alice, id, empty); }, "four-eyes");
  refused(id, 404, [&] { return svc.approve(bob, "123e4567-e89b-12d3-a456-426614174000", empty); });
  refused(id, 404, [&] { return svc.approve(bob, "xyz", empty); });
  refused(id, 400, [&] { return svc.approve(bob, "xyz", body(R"({"approver_id": 5})")); });
  refused(id, 400, [&] { return svc.approve(bob, id, body(R"({"nope": 1})")); });
  // Expired approval window.
  exec("UPDATE movement_requests SET expires_at = now() - interval '1 second' WHERE id = '" + id +
       "'");
  refused(
      id, 409, [&] { return svc.approve(bob, id, empty); }, "expired");
  exec("UPDATE movement_requests SET expires_at = now() + interval '1 hour' WHERE id = '" + id +
       "'");
  for (auto& s : all_states) {
    if (s == "PENDING_APPROVAL")
      continue;
    set_state(id, s);
    refused(
        id, 409, [&] { return svc.approve(bob, id, empty); }, s);
  }
  BOOST_TEST(audits() == "1"); // only the create
}

BOOST_FIXTURE_TEST_CASE(two_concurrent_approvals_one_wins, service_fixture) {
  for (int round = 0; round < 5; ++round) {
    auto id = make("solo");
    std::promise<void> go;
    auto start = go.get_future().share();
    auto call = [&](const api::caller& who) {
      start.wait();
      return svc.approve(who, id, empty).status;
    };
    auto a = std::async(std::launch::async, call, bob);
    auto b = std::async(std::launch::async, call, carol);
    go.set_value();
    std::multiset<int> statuses{a.get(), b.get()};
    BOOST_TEST((statuses == std::multiset<int>{200, 409}));
    BOOST_TEST(events_of(id, "request_approved") == 1);
    BOOST_TEST(audits_for(id, "approve") == 1);
  }
}

// --- reject -------------------------------------------------------------------

BOOST_FIXTURE_TEST_CASE(reject_pending_request, service_fixture) {
  auto id = make("solo");
  auto r = svc.reject(bob, id, body(R"({"reason": "not today"})"));
  BOOST_TEST_REQUIRE(r.status == 200);
  BOOST_TEST(state(id) == "REJECTED");
  BOOST_TEST(request_col(*this, id, "approval_status") == "rejected");
  BOOST_TEST(events_of(id, "request_rejected") == 1);
  BOOST_TEST(audits_for(id, "reject") == 1);
  BOOST_TEST(scalar("SELECT detail ->> 'reason' FROM audit_outbox WHERE action = 'reject'") ==
             "not today");
}

BOOST_FIXTURE_TEST_CASE(reject_refusals_change_nothing, service_fixture) {
  auto id = make("solo");
  refused(id, 400, [&] { return svc.reject(bob, id, body(R"({"reason": 1})")); });
  refused(id, 404, [&] { return svc.reject(bob, "123e4567-e89b-12d3-a456-426614174000", empty); });
  for (auto& s : all_states) {
    if (s == "PENDING_APPROVAL")
      continue;
    set_state(id, s);
    refused(
        id, 409, [&] { return svc.reject(bob, id, empty); }, s);
  }
}

// --- cancel -------------------------------------------------------------------

BOOST_FIXTURE_TEST_CASE(cancel_in_each_allowed_state, service_fixture) {
  for (std::string s : {"PENDING_APPROVAL", "APPROVED", "EXECUTING", "WAITING_MANUAL_ACTION"}) {
    auto id = s == "PENDING_APPROVAL" ? make("manual") : made_and_approved("manual");
    set_state(id, s);
    auto r = svc.cancel(bob, id, body(R"({"reason": "changed my mind"})"));
    BOOST_TEST_REQUIRE(r.status == 200, s << ": " << r.body);
    BOOST_TEST(state(id) == "CANCELLED", s);
    BOOST_TEST(node_state(id, "m") == "CANCELLED", s);
    BOOST_TEST(node_state(id, "b") == "CANCELLED", s);
    BOOST_TEST(events_of(id, "request_cancelled") == 1, s);
    BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE request_id = '" + id +
                     "' AND event_type = 'node_state_changed' AND payload ->> 'node_state' ="
                     " 'CANCELLED'") == 2,
               s);
    BOOST_TEST(audits_for(id, "cancel") == 1, s);
    BOOST_TEST(request_col(*this, id, "current_frontier") == "{}");
  }
}

BOOST_FIXTURE_TEST_CASE(cancel_refused_in_other_states, service_fixture) {
  auto id = make("manual");
  for (std::string s :
       {"MANUAL_INTERVENTION", "COMPLETED", "FAILED", "REJECTED", "EXPIRED", "CANCELLED"}) {
    set_state(id, s);
    refused(
        id, 409, [&] { return svc.cancel(bob, id, empty); }, s);
  }
  set_state(id, "PENDING_APPROVAL");
  refused(id, 400, [&] { return svc.cancel(bob, id, body(R"({"reason": []})")); });
  refused(id, 404, [&] { return svc.cancel(bob, "123e4567-e89b-12d3-a456-426614174000", empty); });
}

BOOST_FIXTURE_TEST_CASE(cancel_refused_once_a_node_was_submitted, service_fixture) {
  auto id = made_and_approved("solo");
  workers::dispatch_pass(conn, engine()); // a: SUBMITTED
  refused(
      id, 409, [&] { return svc.cancel(bob, id, empty); }, "submitted");
  // Fenced back to READY: it still reached SUBMITTING once.
  set_node(id, "a", "node_state = 'READY', claim_token = NULL");
  refused(
      id, 409, [&] { return svc.cancel(bob, id, empty); }, "fenced");
  // A SUBMITTING row written without the flag counts too.
  set_node(id, "a", "node_state = 'SUBMITTING', ever_submitted = false");
  refused(
      id, 409, [&] { return svc.cancel(bob, id, empty); }, "submitting");
}

BOOST_FIXTURE_TEST_CASE(cancel_waits_for_a_dispatch_holding_the_request_and_loses,
                        service_fixture) {
  // The sim's latency keeps the claim transaction (request + node locked)
  // open through preflight and prepare before it commits SUBMITTING.
  add_template(one_node("slow", "chain_transfer",
                        R"("config": {"sim": {"latency_ms": 400, "retry_after_seconds": 30}})"));
  auto id = made_and_approved("slow");
  auto dispatch = std::async(std::launch::async, [&] {
    db::connection_slot c(url);
    return workers::dispatch_pass(c, engine()).processed;
  });
  // Wait until the dispatcher holds the request row: on a loaded machine
  // its first claim may take seconds, and a cancel that ran first would
  // test nothing.
  const std::string lock_request =
      "SELECT 1 FROM movement_requests WHERE id = '" + id + "' FOR UPDATE NOWAIT";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool held = false;
  while (!held && std::chrono::steady_clock::now() < deadline) {
    held = !lock_is_free(url, lock_request);
    if (!held)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  BOOST_TEST_REQUIRE(held, "the dispatcher never held the request");
  auto audit_before = audits();
  auto started = std::chrono::steady_clock::now();
  auto r = svc.cancel(bob, id, empty);
  auto waited = std::chrono::steady_clock::now() - started;
  BOOST_TEST(r.status == 409, r.body);
  BOOST_TEST(std::chrono::duration_cast<std::chrono::milliseconds>(waited).count() >
             100); // it waited for the claim
  BOOST_TEST(dispatch.get() == 1);
  BOOST_TEST(state(id) == "EXECUTING");
  BOOST_TEST(node_state(id, "a") == "SUBMITTED");
  BOOST_TEST(audits() == audit_before);
  BOOST_TEST(events_of(id, "request_cancelled") == 0);
}

// --- resume -------------------------------------------------------------------

BOOST_FIXTURE_TEST_CASE(resume_manual_intervention_restarts_escalation, service_fixture) {
  auto id = made_and_approved("solo");
  make_unknown(*this, id, "a", 2000); // settled (escalation window 900 s)
  reconcile(id);
  BOOST_TEST_REQUIRE(state(id) == "MANUAL_INTERVENTION");
  auto r = svc.resume(bob, id, empty);
  BOOST_TEST_REQUIRE(r.status == 200, r.body);
  BOOST_TEST(state(id) == "EXECUTING");
  auto unknown_for = std::stod(scalar("SELECT extract(epoch FROM now() - unknown_since) FROM"
                                      " movement_request_nodes WHERE request_id = '" +
                                      id + "'"));
  BOOST_TEST(unknown_for < 60);
  BOOST_TEST(events_of(id, "request_executing") == 1);
  BOOST_TEST(audits_for(id, "resume") == 1);
  BOOST_TEST(changed.back() == id);
}

BOOST_FIXTURE_TEST_CASE(resume_observation_timeout_lets_recovery_act_again, service_fixture) {
  auto id = made_and_approved("solo");
  make_unknown(*this, id, "a", 5);
  set_node(id, "a", "error_code = 'OBSERVATION_TIMEOUT'");
  reconcile(id);
  BOOST_TEST_REQUIRE(state(id) == "MANUAL_INTERVENTION");
  BOOST_TEST_REQUIRE(svc.resume(bob, id, empty).status == 200);
  BOOST_TEST(state(id) == "EXECUTING");
  BOOST_TEST(node_state(id, "a") == "UNKNOWN");
  BOOST_TEST(request_col(*this, id, "needs_reconcile") == "f");
}

BOOST_FIXTURE_TEST_CASE(resume_waiting_manual_action, service_fixture) {
  auto id = made_and_approved("manual");
  BOOST_TEST_REQUIRE(state(id) == "WAITING_MANUAL_ACTION");
  auto r = svc.resume(bob, id, empty);
  BOOST_TEST_REQUIRE(r.status == 200);
  // Reconcile parks it again at once: the manual node is still READY.
  BOOST_TEST(events_of(id, "request_executing") == 1);
  BOOST_TEST(state(id) == "WAITING_MANUAL_ACTION");
  BOOST_TEST(audits_for(id, "resume") == 1);
}

BOOST_FIXTURE_TEST_CASE(resume_refused_in_other_states, service_fixture) {
  auto id = make("solo");
  for (auto& s : all_states) {
    if (s == "MANUAL_INTERVENTION" || s == "WAITING_MANUAL_ACTION")
      continue;
    set_state(id, s);
    refused(
        id, 409, [&] { return svc.resume(bob, id, empty); }, s);
  }
  refused(id, 400, [&] { return svc.resume(bob, id, body(R"({"x": 1})")); });
}

// --- retry --------------------------------------------------------------------

BOOST_FIXTURE_TEST_CASE(retry_failed_node_makes_it_ready_for_the_next_attempt, service_fixture) {
  add_template(
      one_node("failing", "chain_transfer", R"("config": {"sim": {"fail_at": "submit"}})"));
  auto id = made_and_approved("failing");
  workers::dispatch_pass(conn, engine());
  reconcile(id);
  BOOST_TEST_REQUIRE(node_state(id, "a") == "FAILED");
  BOOST_TEST_REQUIRE(state(id) == "FAILED");
  auto r = svc.retry(bob, id, body(R"({"node_key": "a"})"));
  BOOST_TEST_REQUIRE(r.status == 200, r.body);
  BOOST_TEST(node_state(id, "a") == "READY");
  BOOST_TEST(state(id) == "EXECUTING");
  BOOST_TEST(request_col(*this, id, "dispatch_paused") == "f");
  BOOST_TEST(body(r.body)["unresolved_nodes"].Size() == 0u);
  BOOST_TEST(audits_for(id, "retry") == 1);
  BOOST_TEST(events_of(id, "request_executing") == 2); // first dispatch + retry
  BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE request_id = '" + id +
                   "' AND payload ->> 'node_state' = 'READY'") == 2); // approve + retry
  // The dispatcher starts attempt 2.
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, node_id(*this, id), "attempt_no") == "2");
}

BOOST_FIXTURE_TEST_CASE(retry_wakes_the_dispatchers_of_every_process, service_fixture) {
  auto id = made_and_approved("solo");
  set_node(id, "a", "node_state = 'FAILED', attempt_no = 1, error_code = 'X'");
  set_state(id, "FAILED");
  auto c = db::connect(url);
  dispatch_listener listener(*c);
  c->get_notifs();
  BOOST_TEST_REQUIRE(listener.received == 0);
  BOOST_TEST_REQUIRE(svc.retry(bob, id, body(R"({"node_key": "a"})")).status == 200);
  c->await_notification(5, 0);
  BOOST_TEST(listener.received == 1);
}

BOOST_FIXTURE_TEST_CASE(retry_of_unknown_node_without_executors_is_503, service_fixture) {
  auto id = made_and_approved("solo");
  make_unknown(*this, id, "a", 30);
  sctx.providers = nullptr;
  refused(id, 503, [&] { return svc.retry(bob, id, body(R"({"node_key": "a"})")); });
}

BOOST_FIXTURE_TEST_CASE(retry_lists_broken_nodes_that_remain, service_fixture) {
  add_template(R"({"template_key": "pair", "version": 1, "nodes": [
      {"node_key": "a", "action_type": "chain_transfer", "executor_key": "sim"},
      {"node_key": "b", "action_type": "chain_transfer", "executor_key": "sim"}]})");
  auto id = made_and_approved("pair");
  set_node(id, "a", "node_state = 'FAILED', attempt_no = 1, error_code = 'X'");
  set_node(id, "b", "node_state = 'FAILED', attempt_no = 1, error_code = 'Y'");
  set_state(id, "FAILED");
  auto r = svc.retry(bob, id, body(R"({"node_key": "a"})"));
  BOOST_TEST_REQUIRE(r.status == 200, r.body);
  auto b = body(r.body);
  BOOST_TEST_REQUIRE(b["unresolved_nodes"].Size() == 1u);
  BOOST_TEST(b["unresolved_nodes"][0]["node_key"].GetString() == std::string("b"));
  BOOST_TEST(node_state(id, "a") == "READY");
  BOOST_TEST(request_col(*this, id, "dispatch_paused") == "t"); // b still FAILED
}

BOOST_FIXTURE_TEST_CASE(retry_unknown_node_found_by_recover_takes_its_outcome, service_fixture) {
  auto id = made_and_approved("solo");
  make_unknown(*this, id, "a", 2000, "MANUAL_INTERVENTION");
  accept_in_ledger(*this, id, "a");
  auto r = svc.retry(bob, id, body(R"({"node_key": "a"})"));
  BOOST_TEST_REQUIRE(r.status == 200, r.body);
  BOOST_TEST(node_state(id, "a") == "COMPLETED"); // the sim's recover_to
  BOOST_TEST(state(id) == "COMPLETED");
  BOOST_TEST(count("SELECT count(*) FROM node_artifacts WHERE kind = 'recover_proof'") == 1);
  BOOST_TEST(audits_for(id, "retry") == 1);
}

BOOST_FIXTURE_TEST_CASE(retry_unknown_node_not_found_is_fenced_and_ready, service_fixture) {
  auto id = made_and_approved("solo");
  make_unknown(*this, id, "a", 30);
  auto r = svc.retry(bob, id, body(R"({"node_key": "a"})"));
  BOOST_TEST_REQUIRE(r.status == 200, r.body);
  BOOST_TEST(node_state(id, "a") == "READY");
  BOOST_TEST(state(id) == "EXECUTING");
  BOOST_TEST(scalar("SELECT fenced FROM sim_ledger") == "t");
  BOOST_TEST(node_col(*this, node_id(*this, id), "claim_token") == "");
  BOOST_TEST(request_col(*this, id, "dispatch_paused") == "f");
  // Next dispatch is attempt 2 under a new key.
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, node_id(*this, id), "attempt_no") == "2");
}

BOOST_FIXTURE_TEST_CASE(retry_unknown_node_still_unknown_is_409, service_fixture) {
  add_template(
      one_node("murky", "chain_transfer", R"("config": {"sim": {"recover_to": "UNKNOWN"}})"));
  auto id = made_and_approved("murky");
  make_unknown(*this, id, "a", 2000, "MANUAL_INTERVENTION");
  accept_in_ledger(*this, id, "a");
  refused(id, 409, [&] { return svc.retry(bob, id, body(R"({"node_key": "a"})")); });
}

BOOST_FIXTURE_TEST_CASE(retry_refusals_change_nothing, service_fixture) {
  auto id = made_and_approved("solo"); // a READY
  set_state(id, "EXECUTING");
  refused(
      id, 409, [&] { return svc.retry(bob, id, body(R"({"node_key": "a"})")); }, "READY node");
  set_node(id, "a", "node_state = 'COMPLETED'");
  refused(
      id, 409, [&] { return svc.retry(bob, id, body(R"({"node_key": "a"})")); }, "COMPLETED node");
  set_node(id, "a", "node_state = 'FAILED', error_code = 'X'");
  for (auto& s : all_states) {
    if (s == "EXECUTING" || s == "MANUAL_INTERVENTION" || s == "FAILED")
      continue;
    set_state(id, s);
    refused(
        id, 409, [&] { return svc.retry(bob, id, body(R"({"node_key": "a"})")); }, s);
  }
  set_state(id, "FAILED");
  refused(id, 422, [&] { return svc.retry(bob, id, body(R"({"node_key": "zz"})")); });
  refused(id, 400, [&] { return svc.retry(bob, id, empty); });
  refused(id, 404, [&] {
    return svc.retry(bob, "123e4567-e89b-12d3-a456-426614174000", body(R"({"node_key": "a"})"));
  });
}

// --- manual complete -------------------------------------------------------------

BOOST_FIXTURE_TEST_CASE(complete_ready_manual_node, service_fixture) {
  auto id = made_and_approved("manual");
  BOOST_TEST_REQUIRE(state(id) == "WAITING_MANUAL_ACTION");
  auto r = svc.complete(bob, id, "m", body(R"({"provider_refs": {"ticket": "OPS-1"}})"));
  BOOST_TEST_REQUIRE(r.status == 200, r.body);
  BOOST_TEST(node_state(id, "m") == "COMPLETED");
  BOOST_TEST(node_state(id, "b") == "READY"); // its successor activated
  BOOST_TEST(state(id) == "EXECUTING");
  BOOST_TEST(scalar("SELECT provider_refs ->> 'ticket' FROM movement_request_nodes WHERE"
                    " node_key = 'm'") == "OPS-1");
  BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE request_id = '" + id +
                   "' AND node_key = 'm' AND payload ->> 'node_state' = 'COMPLETED'") == 1);
  BOOST_TEST(audits_for(id, "complete") == 1);
  BOOST_TEST(changed.back() == id);
  // The dispatcher picks up the successor.
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
}

BOOST_FIXTURE_TEST_CASE(complete_refusals_change_nothing, service_fixture) {
  auto id = make("manual");
  refused(
      id, 409, [&] { return svc.complete(bob, id, "m", empty); }, "PENDING_APPROVAL");
  BOOST_REQUIRE_EQUAL(svc.approve(bob, id, empty).status, 200);
  refused(
      id, 404, [&] { return svc.complete(bob, id, "zz", empty); }, "unknown node");
  refused(id, 400, [&] { return svc.complete(bob, id, "m", body(R"({"provider_refs": 1})")); });
  refused(
      id, 409, [&] { return svc.complete(bob, id, "b", empty); }, "not manual");
  for (auto& s : all_states) {
    if (s == "EXECUTING" || s == "WAITING_MANUAL_ACTION")
      continue;
    set_state(id, s);
    refused(
        id, 409, [&] { return svc.complete(bob, id, "m", empty); }, s);
  }
  set_state(id, "EXECUTING");
  set_node(id, "m", "node_state = 'BLOCKED'");
  refused(
      id, 409, [&] { return svc.complete(bob, id, "m", empty); }, "BLOCKED node");
}

BOOST_FIXTURE_TEST_CASE(callback_outbox_rows_follow_every_transition, service_fixture) {
  settings.callback_secret = "cb-secret";
  auto r = svc.create(alice, body(R"({"template_key": "manual", "idempotency_key": "cb",
      "intent": {"asset": "A", "amount": "1"}, "callback_url": "https://example.com/cb"})"));
  BOOST_TEST_REQUIRE(r.status == 201);
  std::string id = body(r.body)["id"].GetString();
  BOOST_REQUIRE_EQUAL(svc.approve(bob, id, empty).status, 200);
  BOOST_REQUIRE_EQUAL(svc.cancel(bob, id, empty).status, 200);
  BOOST_TEST(
      count("SELECT count(*) FROM movement_events WHERE request_id = '" + id + "'") ==
      count("SELECT count(*) FROM movement_callback_outbox WHERE request_id = '" + id + "'"));
  BOOST_TEST(count("SELECT count(*) FROM movement_callback_outbox WHERE event_type ="
                   " 'request_cancelled'") == 1);
}

BOOST_FIXTURE_TEST_CASE(callback_url_without_a_callback_secret_is_refused, service_fixture) {
  const char* with_url = R"({"template_key": "solo", "idempotency_key": "nocb",
      "intent": {"asset": "A", "amount": "1"}, "callback_url": "https://example.com/cb"})";
  settings.callback_secret.clear();
  auto r = svc.create(alice, body(with_url));
  BOOST_TEST(r.status == 422);
  BOOST_TEST(std::string(body(r.body)["error"]["code"].GetString()) == "callbacks_not_configured");
  BOOST_TEST(r.body.find("callback_url") != std::string::npos);
  BOOST_TEST(count("SELECT count(*) FROM movement_requests") == 0);
  // Without a callback_url the same server creates.
  BOOST_TEST(create_via("solo", "nocb-2").status == 201);
  // With the secret the same body is taken.
  settings.callback_secret = "cb-secret";
  BOOST_TEST(svc.create(alice, body(with_url)).status == 201);
}

BOOST_FIXTURE_TEST_CASE(request_created_callback_takes_the_max_attempts_setting, service_fixture) {
  settings.callback_secret = "cb-secret";
  settings.callback_max_attempts = 3;
  auto r = svc.create(alice, body(R"({"template_key": "solo", "idempotency_key": "m3",
      "intent": {"asset": "A", "amount": "1"}, "callback_url": "https://example.com/cb"})"));
  BOOST_TEST_REQUIRE(r.status == 201);
  BOOST_TEST(scalar("SELECT string_agg(max_attempts::text, ',') FROM movement_callback_outbox"
                    " WHERE event_type = 'request_created'") == "3");
}

BOOST_AUTO_TEST_SUITE_END()
