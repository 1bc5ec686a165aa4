// The drift life cycle and the CCIP sidecar's report format (pure parts of
// verify_drift / ccip_drift).
#include <boost/test/unit_test.hpp>

#include "domain/ccip_drift_report.hpp"
#include "domain/drift.hpp"

using namespace mg::domain;

BOOST_AUTO_TEST_SUITE(drift)

BOOST_AUTO_TEST_CASE(only_the_edges_of_an_episode_are_changes) {
  auto same = [](drift_step s, drift_state st, drift_change c) {
    return s.next == st && s.change == c;
  };
  BOOST_TEST(same(step_drift(drift_state::unverified, true), drift_state::ok, drift_change::none));
  BOOST_TEST(
      same(step_drift(drift_state::unverified, false), drift_state::drift, drift_change::detected));
  BOOST_TEST(same(step_drift(drift_state::ok, false), drift_state::drift, drift_change::detected));
  BOOST_TEST(same(step_drift(drift_state::drift, false), drift_state::drift, drift_change::none));
  BOOST_TEST(same(step_drift(drift_state::drift, true), drift_state::ok, drift_change::resolved));
  BOOST_TEST(same(step_drift(drift_state::ok, true), drift_state::ok, drift_change::none));
}

BOOST_AUTO_TEST_CASE(ccip_report_items_are_parsed_whole_or_refused) {
  std::string error;
  auto items = parse_ccip_drift_report(
      R"({"items": [{"key": "a", "state": "drift", "expected": "1", "observed": "2",
                     "detail": {"x": 1}}, {"key": "b", "state": "ok", "observed": null}]})",
      error);
  BOOST_REQUIRE(items.has_value());
  BOOST_TEST(items->size() == 2u);
  BOOST_TEST((*items)[0].drift);
  BOOST_TEST((*items)[0].detail_json == R"({"x":1})");
  BOOST_TEST(!(*items)[1].drift);
  BOOST_TEST((*items)[1].observed.empty());
  BOOST_TEST(!parse_ccip_drift_report(R"({"items": [{"key": "", "state": "ok"}]})", error));
  BOOST_TEST(error == "items[0]: key must be a string of 1..200 characters");
  BOOST_TEST(!parse_ccip_drift_report(R"({"items": [{"key": "a", "state": "ok",
                                                     "expected": 5}]})",
                                      error));
  BOOST_TEST(!parse_ccip_drift_report(R"([])", error));
  BOOST_TEST(!parse_ccip_drift_report(std::string(R"({"items": [{"key": ")") +
                                          std::string(201, 'k') + R"(", "state": "ok"}]})",
                                      error));
}

BOOST_AUTO_TEST_SUITE_END()
