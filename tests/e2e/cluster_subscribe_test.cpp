// Movement events pushed over CAF (SPEC §6 events through §8's session):
// a subscribed sibling follows its movement by actor messages alone, an
// unsubscribe stops the push, a subscriber that goes away is dropped from
// the fan-out, and a key without scope read cannot subscribe.
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "actors/cluster/movement_client.hpp"
#include "build_paths.hpp"
#include "tests/support/cluster_fixture.hpp"

using namespace mg;
using namespace std::chrono;
using namespace std::chrono_literals;

namespace {

using key = test::api_key_spec;
using namespace test::cluster_keys;
using namespace test::cluster_movements;

const key blind{"blind", "b11d00b11d00b11d00b11d00b11d0000", R"(["create"])"};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct subscribe_fixture : test::cluster_serve_fixture {
  subscribe_fixture() {
    add_template(chain_template);
    keys = {creator, approver, reader, blind};
  }

  void start_serve() { start_cluster("e2e-subscribe"); }

  std::unique_ptr<cluster::movement_client> session(const key& k, caf::actor_system* in = nullptr) {
    return cluster_serve_fixture::session(k, seconds(10), in);
  }

  /// Creates (creator) and approves (approver) a movement; its id.
  std::string create_and_approve(const std::string& idem) {
    auto created = session(creator)->create(create_body(idem));
    BOOST_REQUIRE_MESSAGE(created.status == 201, created.body);
    auto id = test::json_field(created.body, "id");
    auto approved = session(approver)->approve(id, R"({"approver_id": "e2e"})");
    BOOST_REQUIRE_MESSAGE(approved.status == 200, approved.body);
    return id;
  }

  /// Events of `c` until one of `id` has `last_type` (or 30 s pass), then
  /// until none comes for a second.
  std::vector<cluster::pushed_event>
  events_until(cluster::movement_client& c, const std::string& id, const std::string& last_type) {
    std::vector<cluster::pushed_event> out;
    auto deadline = steady_clock::now() + 30s;
    while (steady_clock::now() < deadline) {
      auto e = c.next_event(500ms);
      if (!e)
        continue;
      out.push_back(*e);
      if (e->request_id == id && test::json_field(e->json, "event_type") == last_type)
        break;
    }
    // Rows written after it (the same or a later transaction) follow soon.
    while (auto e = c.next_event(1s))
      out.push_back(*e);
    return out;
  }

  /// movement_api's subscriber count.
  long subscribers(cluster::movement_client& c) {
    return std::stol(test::json_field(c.api_status(), "subscribers"));
  }

  /// Waits up to `limit` for the subscriber count to be `n`.
  bool wait_subscribers(cluster::movement_client& c, long n, seconds limit) {
    auto deadline = steady_clock::now() + limit;
    while (steady_clock::now() < deadline) {
      if (subscribers(c) == n)
        return true;
      std::this_thread::sleep_for(100ms);
    }
    return subscribers(c) == n;
  }
};

std::vector<std::string> types_of(const std::vector<cluster::pushed_event>& events,
                                  const std::string& id) {
  std::vector<std::string> out;
  for (auto& e : events)
    if (e.request_id == id)
      out.push_back(test::json_field(e.json, "event_type"));
  return out;
}

long index_of(const std::vector<std::string>& xs, const std::string& x) {
  for (size_t i = 0; i < xs.size(); ++i)
    if (xs[i] == x)
      return static_cast<long>(i);
  return -1;
}

} // namespace

BOOST_AUTO_TEST_SUITE(cluster_subscribe)

BOOST_FIXTURE_TEST_CASE(subscriber_receives_created_approved_completed_in_order,
                        subscribe_fixture) {
  start_serve();
  auto sub = session(reader);
  auto r = sub->subscribe();
  BOOST_TEST(r.status == 200, r.body);
  auto id = create_and_approve("sub-order-1");
  auto events = events_until(*sub, id, "request_completed");
  auto types = types_of(events, id);
  std::string seen;
  for (auto& t : types)
    seen += t + " ";
  BOOST_TEST_MESSAGE("pushed: " << seen);
  auto created = index_of(types, "request_created");
  auto approved = index_of(types, "request_approved");
  auto completed = index_of(types, "request_completed");
  BOOST_TEST(created == 0, seen);
  BOOST_TEST(approved > created, seen);
  BOOST_TEST(completed > approved, seen);

  // Every pushed event is a movement_events row, in seq order, carrying
  // the very item GET /v3/movements/{id}/events gives.
  BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE request_id = '" + id + "'") ==
             static_cast<long>(types.size()));
  auto http = client(reader).get("/v3/movements/" + id + "/events?limit=100");
  BOOST_TEST(http.status == 200);
  uint64_t last_seq = 0;
  for (auto& e : events) {
    BOOST_TEST(e.seq > last_seq);
    last_seq = e.seq;
    BOOST_TEST(test::json_field(e.json, "id") == e.event_id);
    BOOST_TEST(contains(http.body, e.json), e.json);
  }

  // Resume: after the first event, the rest arrive again without a gap.
  auto again = session(reader);
  BOOST_TEST(again->subscribe(id, events.front().event_id).status == 200);
  auto resumed = types_of(events_until(*again, id, "request_completed"), id);
  BOOST_TEST(resumed.size() == types.size() - 1);
  BOOST_TEST((resumed == std::vector<std::string>(types.begin() + 1, types.end())));

  // The example sibling follows its movement by events alone.
  auto run = test::run_shell(std::string(MG_BINARY_DIR) + "/movegate-sibling --cluster 127.0.0.1:" +
                             std::to_string(cluster_port) + " --keys " + keys_path +
                             " --creator creator --approver approver --template cl_chain"
                             " --amount 5 --input '{\"to\": \"0xabc\"}' --timeout 30"
                             " --follow events");
  BOOST_TEST(run.status == 0, run.output << "\n" << server->log());
  BOOST_TEST(contains(run.output, "event request_created"), run.output);
  BOOST_TEST(contains(run.output, "event request_approved"), run.output);
  BOOST_TEST(contains(run.output, "event request_completed"), run.output);
  BOOST_TEST(contains(run.output, "state COMPLETED"), run.output);
}

BOOST_FIXTURE_TEST_CASE(after_unsubscribe_nothing_more_arrives, subscribe_fixture) {
  start_serve();
  auto sub = session(reader);
  BOOST_TEST(sub->subscribe().status == 200);
  auto created = session(creator)->create(create_body("sub-unsub-1"));
  BOOST_REQUIRE(created.status == 201);
  auto id = test::json_field(created.body, "id");
  auto first = events_until(*sub, id, "request_created");
  BOOST_TEST(types_of(first, id).size() == 1u);

  auto un = sub->unsubscribe();
  BOOST_TEST(un.status == 200);
  BOOST_TEST(test::json_field(un.body, "removed") == "1", un.body);
  BOOST_TEST(subscribers(*sub) == 0);
  BOOST_TEST(session(approver)->approve(id, R"({"approver_id": "e2e"})").status == 200);
  BOOST_TEST(wait_state(id, "COMPLETED"));
  // Let a poll or two pass: still nothing for this client.
  auto late = sub->next_event(1500ms);
  BOOST_TEST(!late.has_value(), (late ? late->json : ""));
}

BOOST_FIXTURE_TEST_CASE(subscribers_that_quit_or_disconnect_leave_the_fan_out, subscribe_fixture) {
  start_serve();
  auto watcher = session(reader);
  BOOST_TEST(subscribers(*watcher) == 0);
  // One subscriber in this process (its actor will quit), one on another
  // CAF node (its node will disconnect).
  auto local = session(reader);
  BOOST_TEST(local->subscribe().status == 200);
  auto other = std::make_unique<test::client_system>();
  auto remote = session(reader, other->sys.get());
  BOOST_TEST(remote->subscribe().status == 200);
  BOOST_TEST(wait_subscribers(*watcher, 2, 60s));

  local.reset(); // its scoped actor quits
  BOOST_TEST(wait_subscribers(*watcher, 1, 60s));
  remote.reset();
  other.reset(); // the whole node goes away
  BOOST_TEST(wait_subscribers(*watcher, 0, 60s));
}

BOOST_FIXTURE_TEST_CASE(a_key_without_read_scope_cannot_subscribe, subscribe_fixture) {
  start_serve();
  auto b = session(blind);
  auto refused = b->subscribe();
  BOOST_TEST(refused.status == 403);
  BOOST_TEST(contains(refused.body, "key lacks scope 'read'"), refused.body);
  BOOST_TEST(subscribers(*b) == 0);

  auto r = session(reader);
  BOOST_TEST(r->subscribe("not-a-uuid").status == 400);
  BOOST_TEST(r->subscribe("00000000-0000-0000-0000-000000000000").status == 404);
  BOOST_TEST(r->subscribe("", "00000000-0000-0000-0000-000000000000").status == 404);
  BOOST_TEST(subscribers(*r) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
