// deploy/movegate.env stays complete: every MG_* setting config/settings.cpp
// reads is listed (with its default), so operators see every knob. The
// Prometheus rules pass `promtool check rules` and their unit tests
// (`promtool test rules`), and every query of the Grafana dashboard parses.
#include <boost/test/unit_test.hpp>

#include "build_paths.hpp"
#include "domain/json.hpp"
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <unistd.h>
#include <vector>

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  BOOST_REQUIRE_MESSAGE(in, "cannot read " << path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Every quoted "MG_NAME" in a source file.
std::set<std::string> quoted_settings(const std::string& text) {
  static const std::regex name("\"(MG_[A-Z0-9_]+)\"");
  std::set<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), name), end; it != end; ++it)
    out.insert((*it)[1]);
  return out;
}

/// Every MG_NAME= assignment (commented or not) in an env file.
std::set<std::string> env_entries(const std::string& text) {
  static const std::regex entry(R"((?:^|\n)#?(MG_[A-Z0-9_]+)=)");
  std::set<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), entry), end; it != end; ++it)
    out.insert((*it)[1]);
  return out;
}

struct shell_result {
  int status = -1;
  std::string output; // stdout and stderr
};

shell_result run(const std::string& command) {
  shell_result r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  BOOST_REQUIRE_MESSAGE(p, "cannot run " << command);
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p))
    r.output.append(buf, n);
  r.status = pclose(p);
  return r;
}

const std::string prometheus_dir = std::string(MG_SOURCE_DIR) + "/deploy/prometheus";

/// Every "expr" string of a Grafana dashboard, JSON escapes undone.
std::vector<std::string> dashboard_queries(const std::string& json) {
  static const std::regex expr(R"re("expr":\s*"((?:[^"\\]|\\.)*)")re");
  std::vector<std::string> out;
  for (std::sregex_iterator it(json.begin(), json.end(), expr), end; it != end; ++it)
    out.push_back(std::regex_replace((*it)[1].str(), std::regex(R"(\\(.))"), "$1"));
  return out;
}

/// A rules file recording each query (Grafana's $__rate_interval as 5m),
/// so promtool parses them.
std::string as_recording_rules(const std::vector<std::string>& queries) {
  std::string out = "groups:\n  - name: dashboard\n    rules:\n";
  for (size_t i = 0; i < queries.size(); ++i) {
    auto q = std::regex_replace(queries[i], std::regex(R"(\$__rate_interval)"), "5m");
    q = std::regex_replace(q, std::regex("'"), "''");
    out += "      - record: dashboard:query_" + std::to_string(i) + "\n        expr: '" + q + "'\n";
  }
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(deploy_files)

BOOST_AUTO_TEST_CASE(alert_rules_pass_promtool_check_rules) {
  auto r = run("promtool check rules " + prometheus_dir + "/movegate-rules.yml");
  BOOST_TEST_MESSAGE(r.output);
  BOOST_TEST(r.status == 0, r.output);
  BOOST_TEST(r.output.find("SUCCESS") != std::string::npos, r.output);
}

BOOST_AUTO_TEST_CASE(alert_rules_pass_their_promtool_unit_tests) {
  auto r = run("cd " + prometheus_dir + " && promtool test rules movegate-rules.test.yml");
  BOOST_TEST_MESSAGE(r.output);
  BOOST_TEST(r.status == 0, r.output);
  BOOST_TEST(r.output.find("SUCCESS") != std::string::npos, r.output);
}

BOOST_AUTO_TEST_CASE(every_alert_has_a_runbook_line_and_a_unit_test) {
  auto rules = read_file(prometheus_dir + "/movegate-rules.yml");
  auto tests = read_file(prometheus_dir + "/movegate-rules.test.yml");
  static const std::regex alert(R"(- alert: (\w+))");
  int alerts = 0;
  for (std::sregex_iterator it(rules.begin(), rules.end(), alert), end; it != end; ++it) {
    ++alerts;
    const std::string name = (*it)[1];
    auto next = rules.find("- alert:", it->position() + 1);
    auto body = rules.substr(it->position(),
                             next == std::string::npos ? std::string::npos : next - it->position());
    BOOST_TEST(body.find("runbook: ") != std::string::npos, name << " has no runbook");
    BOOST_TEST(tests.find("alertname: " + name + "\n") != std::string::npos,
               name << " has no promtool unit test");
  }
  BOOST_TEST(alerts >= 13);
}

BOOST_AUTO_TEST_CASE(dashboard_is_json_and_its_queries_parse) {
  auto json = read_file(std::string(MG_SOURCE_DIR) + "/deploy/grafana/movegate-dashboard.json");
  BOOST_CHECK_NO_THROW(mg::json::parse_trusted(json, "dashboard"));
  auto queries = dashboard_queries(json);
  BOOST_REQUIRE(queries.size() >= 10u);
  const std::string path =
      std::string(MG_BINARY_DIR) + "/dashboard-queries-" + std::to_string(getpid()) + ".yml";
  std::ofstream(path) << as_recording_rules(queries);
  auto r = run("promtool check rules " + path);
  std::remove(path.c_str());
  BOOST_TEST(r.status == 0, r.output);
}

BOOST_AUTO_TEST_CASE(env_file_lists_every_setting) {
  auto settings = quoted_settings(read_file(std::string(MG_SOURCE_DIR) + "/config/settings.cpp"));
  auto listed = env_entries(read_file(std::string(MG_SOURCE_DIR) + "/deploy/movegate.env"));
  BOOST_REQUIRE(settings.size() > 40);
  for (auto& s : settings)
    BOOST_TEST(listed.count(s) == 1u, s << " is missing from deploy/movegate.env");
  for (auto& l : listed)
    BOOST_TEST(settings.count(l) == 1u, l << " in deploy/movegate.env is not a setting");
}

BOOST_AUTO_TEST_CASE(service_unit_runs_serve_with_the_env_file_and_restarts_on_failure) {
  auto unit = read_file(std::string(MG_SOURCE_DIR) + "/deploy/movegate.service");
  for (const char* line :
       {"ExecStart=/usr/local/bin/movegate serve", "EnvironmentFile=/etc/movegate/movegate.env",
        "Restart=on-failure", "RestartPreventExitStatus=2", "NoNewPrivileges=yes",
        "ProtectSystem=strict"})
    BOOST_TEST(unit.find(std::string("\n") + line + "\n") != std::string::npos, line);
}

BOOST_AUTO_TEST_SUITE_END()
