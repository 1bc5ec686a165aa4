// cex_transfer_ingest against a real local HTTP venue server: transfers are
// stored once however often they are pulled, status changes are followed,
// changed facts are never overwritten (the operator hears), the cursor is
// kept per venue and sent back, has_more pages are followed; a malformed
// page, an HTTP 500 or a timeout changes nothing of that venue but its
// failure count, and the other venues go on.
#include <boost/test/unit_test.hpp>
#include <httplib.h>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "actors/workers/cex_transfer_ingest.hpp"
#include "persistence/db.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"
#include "tests/support/http_peer.hpp"

using namespace mg;
using namespace mg::test;

namespace {

struct venue_answer {
  int status = 200;
  std::string body;
  std::chrono::milliseconds delay{0};
};

/// A venue history server on 127.0.0.1 under /api: GET /api/{venue}/transfers
/// answers what the test scripted for that venue (given the `since` it got)
/// and records every `since` it was sent ("<none>" when absent).
class venue_server {
public:
  using script = std::function<venue_answer(const std::string& since)>;

  venue_server() {
    server_.Get(R"(/api/([^/]+)/transfers)",
                [this](const httplib::Request& req, httplib::Response& res) {
                  auto venue = req.matches[1].str();
                  auto since = req.has_param("since") ? req.get_param_value("since") : "<none>";
                  script s;
                  {
                    std::lock_guard<std::mutex> lock(mutex_);
                    calls_[venue].push_back(since);
                    auto it = scripts_.find(venue);
                    if (it != scripts_.end())
                      s = it->second;
                  }
                  venue_answer a = s ? s(since) : venue_answer{404, "{}"};
                  if (a.delay.count() > 0)
                    std::this_thread::sleep_for(a.delay);
                  res.status = a.status;
                  res.set_content(a.body, "application/json");
                });
    port_ = test::listen_in_background(server_, thread_);
  }
  ~venue_server() { test::stop_listening(server_, thread_); }

  void set(const std::string& venue, script s) {
    std::lock_guard<std::mutex> lock(mutex_);
    scripts_[venue] = std::move(s);
  }
  /// Always the same answer.
  void set(const std::string& venue, venue_answer a) {
    set(venue, [a](const std::string&) { return a; });
  }
  std::vector<std::string> calls(const std::string& venue) {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_[venue];
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/api"; }

private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::map<std::string, script> scripts_;
  std::map<std::string, std::vector<std::string>> calls_;
};

std::string item(const std::string& id, const std::string& amount = "100.25",
                 const std::string& status = "completed", const std::string& extra = "") {
  return R"({"id": ")" + id + R"(", "direction": "withdrawal", "asset": "USDC", "amount": ")" +
         amount + R"(", "status": ")" + status +
         R"(", "occurred_at": "2024-05-01T12:00:00Z", "tx_hash": "0xabc", "network": "base")" +
         extra + "}";
}

venue_answer page(const std::vector<std::string>& items, const std::string& next_cursor,
                  bool has_more = false) {
  std::string list;
  for (auto& i : items)
    list += (list.empty() ? "" : ",") + i;
  return {200, R"({"transfers": [)" + list + R"(], "next_cursor": )" +
                   (next_cursor.empty() ? "null" : "\"" + next_cursor + "\"") +
                   R"(, "has_more": )" + (has_more ? "true" : "false") + "}"};
}

long transfers(db_fixture& f, const std::string& venue) {
  return f.count("SELECT count(*) FROM cex_transfers WHERE venue = '" + venue + "'");
}

std::string cursor_col(db_fixture& f, const std::string& venue, const std::string& column) {
  return f.scalar("SELECT " + column + " FROM cex_transfer_cursors WHERE venue = '" + venue + "'");
}

} // namespace

BOOST_AUTO_TEST_SUITE(cex_transfer_ingest)

BOOST_FIXTURE_TEST_CASE(re_pull_stores_each_transfer_once_and_sends_the_cursor, db_fixture) {
  venue_server venue;
  // The venue ignores `since`: every pull returns the same two transfers.
  venue.set("alpha", page({item("wd-1"), item("dp-2", "7")}, "cur/1 2"));
  workers::cex_transfer_ingest ingest({"alpha"}, venue.url());
  workers::cex_ingest_counts first;
  BOOST_TEST(ingest.pass(conn, &first).processed == 2);
  BOOST_TEST(first.inserted == 2);
  BOOST_TEST(transfers(*this, "alpha") == 2);
  BOOST_TEST(scalar("SELECT amount::text FROM cex_transfers WHERE venue_transfer_id = 'wd-1'") ==
             "100.25");
  BOOST_TEST(scalar("SELECT occurred_at = '2024-05-01T12:00:00Z' FROM cex_transfers"
                    " WHERE venue_transfer_id = 'wd-1'") == "t");
  BOOST_TEST(scalar("SELECT raw->>'network' FROM cex_transfers WHERE venue_transfer_id = 'wd-1'") ==
             "base");
  BOOST_TEST(cursor_col(*this, "alpha", "cursor") == "cur/1 2");

  workers::cex_ingest_counts second;
  BOOST_TEST(ingest.pass(conn, &second).processed == 0); // nothing new: no drain
  BOOST_TEST(second.inserted == 0);
  BOOST_TEST(transfers(*this, "alpha") == 2);
  auto calls = venue.calls("alpha");
  BOOST_REQUIRE(calls.size() == 2u);
  BOOST_TEST(calls[0] == "<none>");
  BOOST_TEST(calls[1] == "cur/1 2"); // percent-encoded on the wire, decoded by the server
  BOOST_TEST(cursor_col(*this, "alpha", "pulls_total") == "2");
  BOOST_TEST(cursor_col(*this, "alpha", "consecutive_failures") == "0");
}

BOOST_FIXTURE_TEST_CASE(status_changes_are_followed_but_facts_never_overwritten, db_fixture) {
  venue_server venue;
  venue.set("alpha", page({item("wd-1", "100.25", "pending")}, "c1"));
  workers::cex_transfer_ingest ingest({"alpha"}, venue.url());
  BOOST_TEST(ingest.pass(conn).processed == 1);
  BOOST_TEST(scalar("SELECT status FROM cex_transfers") == "pending");

  venue.set("alpha", page({item("wd-1", "100.25", "completed")}, "c2"));
  workers::cex_ingest_counts c;
  BOOST_TEST(ingest.pass(conn, &c).processed == 1);
  BOOST_TEST(c.updated == 1);
  BOOST_TEST(transfers(*this, "alpha") == 1);
  BOOST_TEST(scalar("SELECT status FROM cex_transfers") == "completed");

  // The venue now claims another amount for the same transfer.
  venue.set("alpha", page({item("wd-1", "999", "completed")}, "c3"));
  workers::cex_ingest_counts m;
  ingest.pass(conn, &m);
  BOOST_TEST(m.mismatched == 1);
  BOOST_TEST(scalar("SELECT amount::text FROM cex_transfers") == "100.25");
  BOOST_TEST(count("SELECT count(*) FROM notification_outbox WHERE kind = 'cex_transfer_mismatch'"
                   " AND subject = 'alpha:wd-1' AND payload->'reported'->>'amount' = '999'") == 1);
  ingest.pass(conn); // the same wrong claim again: no second notification
  BOOST_TEST(count("SELECT count(*) FROM notification_outbox") == 1);
}

BOOST_FIXTURE_TEST_CASE(malformed_replies_change_nothing_but_the_failure_count, db_fixture) {
  venue_server venue;
  venue.set("alpha", page({item("wd-1")}, "c1"));
  workers::cex_transfer_ingest ingest({"alpha"}, venue.url());
  BOOST_TEST(ingest.pass(conn).processed == 1);

  const std::vector<std::string> bad_bodies = {
      "not json at all",
      "[]",
      R"({"transfers": {}})",
      // a good item followed by one whose amount is a JSON number
      R"({"transfers": [)" + item("wd-2") +
          R"(, {"id": "wd-3", "direction": "deposit", "asset": "USDC", "amount": 5,)"
          R"( "status": "done", "occurred_at": "2024-05-01T12:00:00Z"}], "next_cursor": "c9"})",
      R"({"transfers": [)" + item("wd-2", "-5") + R"(], "next_cursor": "c9"})",
      R"({"transfers": [)" + item("wd-2", "1e5") + R"(], "next_cursor": "c9"})",
      R"({"transfers": [{"id": "wd-2", "direction": "sideways", "asset": "USDC", "amount": "1",)"
      R"( "status": "done", "occurred_at": "2024-05-01T12:00:00Z"}], "next_cursor": "c9"})",
      R"({"transfers": [{"id": "wd-2", "direction": "deposit", "asset": "USDC", "amount": "1",)"
      R"( "status": "done", "occurred_at": "yesterday"}], "next_cursor": "c9"})",
      R"({"transfers": [)" + item("wd-2") + R"(], "next_cursor": 7})",
      R"({"transfers": [)" + item("wd-2") + R"(], "next_cursor": "c9", "has_more": "yes"})",
  };
  int failures = 0;
  for (auto& body : bad_bodies) {
    BOOST_TEST_CONTEXT("reply " << body) {
      venue.set("alpha", venue_answer{200, body});
      workers::cex_ingest_counts c;
      BOOST_TEST(ingest.pass(conn, &c).processed == 0);
      BOOST_TEST(c.failed_venues == 1);
      ++failures;
      BOOST_TEST(transfers(*this, "alpha") == 1); // wd-2 never half-written
      BOOST_TEST(cursor_col(*this, "alpha", "cursor") == "c1");
      BOOST_TEST(cursor_col(*this, "alpha", "consecutive_failures") == std::to_string(failures));
      BOOST_TEST(cursor_col(*this, "alpha", "last_error").find("venue reply refused") == 0u);
    }
  }
  BOOST_TEST(cursor_col(*this, "alpha", "failures_total") == std::to_string(failures));
  // Well-formed, but a date PostgreSQL refuses, after a good item: the
  // page's transaction rolls back whole.
  venue.set("alpha", page({item("wd-2"), R"({"id": "wd-3", "direction": "deposit", "asset": "X",)"
                                         R"( "amount": "1", "status": "done",)"
                                         R"( "occurred_at": "2024-02-30T00:00:00Z"})"},
                          "c9"));
  BOOST_TEST(ingest.pass(conn).processed == 0);
  BOOST_TEST(transfers(*this, "alpha") == 1);
  BOOST_TEST(cursor_col(*this, "alpha", "cursor") == "c1");
  BOOST_TEST(cursor_col(*this, "alpha", "failures_total") == std::to_string(++failures));
  // The venue recovers: a success resets the run of failures.
  venue.set("alpha", page({item("wd-2")}, "c2"));
  BOOST_TEST(ingest.pass(conn).processed == 1);
  BOOST_TEST(cursor_col(*this, "alpha", "consecutive_failures") == "0");
  BOOST_TEST(cursor_col(*this, "alpha", "cursor") == "c2");
}

BOOST_FIXTURE_TEST_CASE(one_venue_failing_does_not_stop_the_others, db_fixture) {
  venue_server venue;
  venue.set("alpha", venue_answer{500, R"({"error": "down"})"});
  venue.set("beta", page({item("b-1"), item("b-2")}, "b2"));
  venue.set("gamma", page({item("g-1")}, "g1"));
  workers::cex_transfer_ingest ingest({"alpha", "beta", "gamma"}, venue.url());
  workers::cex_ingest_counts c;
  auto r = ingest.pass(conn, &c);
  BOOST_TEST(r.processed == 3);
  BOOST_TEST(c.failed_venues == 1);
  BOOST_TEST(transfers(*this, "alpha") == 0);
  BOOST_TEST(transfers(*this, "beta") == 2);
  BOOST_TEST(transfers(*this, "gamma") == 1);
  BOOST_TEST(cursor_col(*this, "alpha", "last_error") == "venue reply refused: HTTP 500");
  BOOST_TEST(cursor_col(*this, "alpha", "cursor") == "");
  BOOST_TEST(cursor_col(*this, "beta", "cursor") == "b2");
  // A venue id is only unique per venue: the same id at two venues is two rows.
  venue.set("alpha", page({item("b-1")}, "a1"));
  BOOST_TEST(ingest.pass(conn).processed == 1);
  BOOST_TEST(count("SELECT count(*) FROM cex_transfers WHERE venue_transfer_id = 'b-1'") == 2);
}

BOOST_FIXTURE_TEST_CASE(timeouts_and_unreachable_venues_are_counted_failures, db_fixture) {
  venue_server venue;
  venue_answer slow = page({item("s-1")}, "s1");
  slow.delay = std::chrono::milliseconds(1500);
  venue.set("slow", slow);
  venue.set("fast", page({item("f-1")}, "f1"));
  workers::cex_transfer_ingest ingest({"slow", "fast"}, venue.url(), 0.3);
  workers::cex_ingest_counts c;
  auto started = std::chrono::steady_clock::now();
  BOOST_TEST(ingest.pass(conn, &c).processed == 1);
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - started)
                  .count();
  BOOST_TEST(took < 1400); // the slow venue was cut off at its timeout
  BOOST_TEST(c.failed_venues == 1);
  BOOST_TEST(transfers(*this, "slow") == 0);
  BOOST_TEST(transfers(*this, "fast") == 1);
  BOOST_TEST(cursor_col(*this, "slow", "failures_total") == "1");

  // Nothing listening at all.
  auto dead_port = venue_server().url(); // bound, then closed
  workers::cex_transfer_ingest gone({"fast"}, dead_port, 0.3);
  workers::cex_ingest_counts g;
  BOOST_TEST(gone.pass(conn, &g).processed == 0);
  BOOST_TEST(g.failed_venues == 1);
}

BOOST_FIXTURE_TEST_CASE(has_more_pages_are_followed_in_one_pass, db_fixture) {
  venue_server venue;
  venue.set("alpha", [](const std::string& since) {
    if (since == "<none>")
      return page({item("p1-a"), item("p1-b")}, "p1", true);
    if (since == "p1")
      return page({item("p2-a")}, "p2", true);
    if (since == "p2")
      return page({item("p3-a")}, "p3", false);
    return page({}, "");
  });
  workers::cex_transfer_ingest ingest({"alpha"}, venue.url());
  workers::cex_ingest_counts c;
  BOOST_TEST(ingest.pass(conn, &c).processed == 4);
  BOOST_TEST(c.pages == 3);
  BOOST_TEST(cursor_col(*this, "alpha", "cursor") == "p3");
  // A later pull with nothing new and no next cursor keeps the cursor.
  BOOST_TEST(ingest.pass(conn).processed == 0);
  BOOST_TEST(cursor_col(*this, "alpha", "cursor") == "p3");
  BOOST_TEST(venue.calls("alpha").back() == "p3");
}

BOOST_FIXTURE_TEST_CASE(venue_csv_and_names_are_checked, db_fixture) {
  BOOST_TEST((workers::parse_venue_csv(" alpha, beta ,,alpha,") ==
              std::vector<std::string>{"alpha", "beta"}));
  BOOST_TEST(workers::parse_venue_csv(" , ").empty());
  BOOST_CHECK_THROW(workers::cex_transfer_ingest({"a/b"}, "http://127.0.0.1:1"),
                    std::invalid_argument);
  BOOST_CHECK_THROW(workers::cex_transfer_ingest({"alpha"}, "ftp://x"), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
