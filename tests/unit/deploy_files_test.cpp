// deploy/movegate.env stays complete: every MG_* setting config/settings.cpp
// reads is listed (with its default), so operators see every knob.
#include <boost/test/unit_test.hpp>

#include "build_paths.hpp"
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

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

} // namespace

BOOST_AUTO_TEST_SUITE(deploy_files)

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
