// The Prometheus registry and its text exposition (format 0.0.4): HELP and
// TYPE once per family, escaping, histogram buckets cumulative with +Inf,
// _sum and _count, and the database families' shape.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <thread>

#include "config/metrics.hpp"
#include "http/metrics_route.hpp"
#include "services/database_metrics.hpp"

using namespace mg;

BOOST_AUTO_TEST_SUITE(metrics_render)

BOOST_AUTO_TEST_CASE(counter_family_renders_help_type_and_samples) {
  metrics::registry r;
  r.get_counter("mg_test_total", "Things done.", {{"worker", "a"}}).inc();
  r.get_counter("mg_test_total", "Things done.", {{"worker", "b"}}).inc(3);
  r.get_counter("mg_test_total", "Things done.", {{"worker", "a"}}).inc();
  BOOST_TEST(metrics::render(r.collect()) == "# HELP mg_test_total Things done.\n"
                                             "# TYPE mg_test_total counter\n"
                                             "mg_test_total{worker=\"a\"} 2\n"
                                             "mg_test_total{worker=\"b\"} 3\n");
}

BOOST_AUTO_TEST_CASE(histogram_buckets_are_cumulative_with_inf_sum_and_count) {
  metrics::registry r;
  auto& h = r.get_histogram("mg_pass_seconds", "Pass time.", {0.25, 1}, {{"worker", "w"}});
  h.observe(0.125);
  h.observe(0.25); // le is inclusive
  h.observe(0.5);
  h.observe(7);
  BOOST_TEST(metrics::render(r.collect()) == "# HELP mg_pass_seconds Pass time.\n"
                                             "# TYPE mg_pass_seconds histogram\n"
                                             "mg_pass_seconds_bucket{worker=\"w\",le=\"0.25\"} 2\n"
                                             "mg_pass_seconds_bucket{worker=\"w\",le=\"1\"} 3\n"
                                             "mg_pass_seconds_bucket{worker=\"w\",le=\"+Inf\"} 4\n"
                                             "mg_pass_seconds_sum{worker=\"w\"} 7.875\n"
                                             "mg_pass_seconds_count{worker=\"w\"} 4\n");
}

BOOST_AUTO_TEST_CASE(label_values_and_help_are_escaped) {
  metrics::family f{"mg_g", "Line one\nback\\slash \"quoted\"", metrics::kind::gauge, {}};
  f.samples.push_back({"", {{"path", "a\"b\\c\nd"}}, 1.5});
  BOOST_TEST(metrics::render({f}) == "# HELP mg_g Line one\\nback\\\\slash \"quoted\"\n"
                                     "# TYPE mg_g gauge\n"
                                     "mg_g{path=\"a\\\"b\\\\c\\nd\"} 1.5\n");
}

BOOST_AUTO_TEST_CASE(values_format_like_prometheus) {
  BOOST_TEST(metrics::format_value(0) == "0");
  BOOST_TEST(metrics::format_value(42) == "42");
  BOOST_TEST(metrics::format_value(0.1) == "0.1");
  BOOST_TEST(metrics::format_value(-2.5) == "-2.5");
  BOOST_TEST(metrics::format_value(std::numeric_limits<double>::infinity()) == "+Inf");
  BOOST_TEST(metrics::format_value(-std::numeric_limits<double>::infinity()) == "-Inf");
  BOOST_TEST(metrics::format_value(std::nan("")) == "NaN");
  BOOST_TEST(std::stod(metrics::format_value(1.0 / 3)) == 1.0 / 3);
}

BOOST_AUTO_TEST_CASE(one_name_with_two_types_is_refused) {
  metrics::registry r;
  r.get_counter("mg_x_total", "x");
  BOOST_CHECK_THROW(r.get_gauge("mg_x_total", "x"), std::logic_error);
  BOOST_CHECK_THROW(metrics::histogram({1, 0.5}), std::logic_error);
}

BOOST_AUTO_TEST_CASE(concurrent_increments_are_not_lost) {
  metrics::registry r;
  auto& c = r.get_counter("mg_c_total", "c");
  auto& h = r.get_histogram("mg_h_seconds", "h", {1});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c.inc();
        h.observe(0.5);
      }
    });
  for (auto& t : threads)
    t.join();
  BOOST_TEST(c.value() == 40000);
  BOOST_TEST(h.cumulative().back() == 40000u);
  BOOST_TEST(h.sum() == 20000);
}

BOOST_AUTO_TEST_CASE(database_families_list_every_state_and_quantiles) {
  db::metrics_snapshot s;
  s.requests_by_state = {{"EXECUTING", 3}};
  s.heartbeats = {{"node_dispatcher", "n1", "core", 0.5, 2}};
  s.oldest_ready_age_seconds = 42;
  s.callback_lag_seconds = 7.5;
  s.cluster_members_live = 2;
  s.cluster_members_expired = 1;
  s.dispatch = {0.01, 0.2, 7};
  auto text = metrics::render(services::database_families(s));
  BOOST_TEST(text.find("movegate_requests{state=\"EXECUTING\"} 3\n") != std::string::npos);
  BOOST_TEST(text.find("movegate_requests{state=\"PENDING_APPROVAL\"} 0\n") != std::string::npos);
  BOOST_TEST(text.find("movegate_nodes{state=\"SUBMITTING\"} 0\n") != std::string::npos);
  BOOST_TEST(text.find("movegate_callback_outbox{status=\"dlq\"} 0\n") != std::string::npos);
  BOOST_TEST(text.find("movegate_worker_heartbeat_age_seconds{worker=\"node_dispatcher\","
                       "runtime_node=\"n1\",group=\"core\"} 0.5\n") != std::string::npos);
  BOOST_TEST(text.find("movegate_worker_consecutive_errors{worker=\"node_dispatcher\","
                       "runtime_node=\"n1\",group=\"core\"} 2\n") != std::string::npos);
  BOOST_TEST(text.find("movegate_oldest_ready_node_age_seconds 42\n") != std::string::npos);
  BOOST_TEST(text.find("movegate_callback_delivery_lag_seconds 7.5\n") != std::string::npos);
  BOOST_TEST(text.find("movegate_cluster_members{state=\"expired\"} 1\n") != std::string::npos);
  BOOST_TEST(text.find("movegate_cluster_members{state=\"live\"} 2\n") != std::string::npos);
  BOOST_TEST(text.find("movegate_dispatch_latency_seconds{percentile=\"95\"} 0.2\n") !=
             std::string::npos);
  BOOST_TEST(text.find("movegate_observe_latency_seconds{percentile=\"50\"} NaN\n") !=
             std::string::npos);
  auto pool = metrics::render(services::pool_families({2, 3, 8}));
  BOOST_TEST(pool.find("movegate_db_pool_connections{state=\"in_use\"} 2\n") != std::string::npos);
  BOOST_TEST(pool.find("movegate_db_pool_connections{state=\"idle\"} 3\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(response_classes_keep_429_apart_from_other_4xx) {
  BOOST_TEST(std::string(http::response_class(200)) == "2xx");
  BOOST_TEST(std::string(http::response_class(304)) == "3xx");
  BOOST_TEST(std::string(http::response_class(404)) == "4xx");
  BOOST_TEST(std::string(http::response_class(429)) == "429");
  BOOST_TEST(std::string(http::response_class(503)) == "5xx");
}

BOOST_AUTO_TEST_SUITE_END()
