// Structured log lines: one JSON object per line with time, level,
// component (the thread's scope), runtime_node and the message.
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "config/log.hpp"
#include "domain/json.hpp"

using namespace mg;

namespace {

/// Everything written to stderr while `f` runs.
template <class F> std::string capture_stderr(F&& f) {
  char path[] = "/tmp/mg-log-test-XXXXXX";
  int fd = mkstemp(path);
  std::fflush(stderr);
  int saved = dup(2);
  dup2(fd, 2);
  f();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path);
  return text.str();
}

} // namespace

BOOST_AUTO_TEST_SUITE(structured_log)

BOOST_AUTO_TEST_CASE(lines_carry_component_runtime_node_and_fields) {
  log::set_runtime_node("node-a:42");
  auto out = capture_stderr([] {
    log::info("outside any scope");
    {
      log::component_scope scope("node_dispatcher");
      log::warn("claim missed", {{"request_id", "r-1"}, {"node_id", "n-1"}});
    }
    log::info("after the scope");
  });
  std::istringstream lines(out);
  std::string line;
  std::vector<json::document> docs;
  while (std::getline(lines, line)) {
    auto d = json::parse(line);
    BOOST_REQUIRE_MESSAGE(d && d->IsObject(), line);
    docs.push_back(std::move(*d));
  }
  BOOST_REQUIRE_EQUAL(docs.size(), 3u);
  BOOST_TEST(json::get_string(docs[0], "component") == "main");
  BOOST_TEST(json::get_string(docs[1], "component") == "node_dispatcher");
  BOOST_TEST(json::get_string(docs[1], "level") == "warn");
  BOOST_TEST(json::get_string(docs[1], "msg") == "claim missed");
  BOOST_TEST(json::get_string(docs[1], "request_id") == "r-1");
  BOOST_TEST(json::get_string(docs[1], "node_id") == "n-1");
  BOOST_TEST(json::get_string(docs[2], "component") == "main");
  for (auto& d : docs) {
    BOOST_TEST(json::get_string(d, "runtime_node") == "node-a:42");
    BOOST_TEST(!json::get_string(d, "ts").empty());
  }
}

BOOST_AUTO_TEST_CASE(level_threshold_drops_lower_lines) {
  log::set_level(log::level::warn);
  auto out = capture_stderr([] {
    log::info("dropped");
    log::error("kept");
  });
  log::set_level(log::level::info);
  BOOST_TEST(out.find("dropped") == std::string::npos);
  BOOST_TEST(out.find("kept") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
