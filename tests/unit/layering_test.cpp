// The layering of DESIGN.md, read from the source tree: a file lives where
// its dependencies put it. domain/ is pure; persistence/ knows domain/ and
// config/; services/ knows those and nothing that spawns, serves or calls
// out; http/ reaches the database only through services/; SQL is written
// only in persistence/.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "build_paths.hpp"

namespace fs = std::filesystem;

namespace {

struct source_file {
  std::string path; // relative to the source tree, e.g. "services/x.cpp"
  std::string text;
};

/// Every .cpp and .hpp under `folder` of the source tree.
std::vector<source_file> sources_in(const std::string& folder) {
  const fs::path root(MG_SOURCE_DIR);
  std::vector<source_file> out;
  for (auto& entry : fs::recursive_directory_iterator(root / folder)) {
    auto ext = entry.path().extension();
    if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp"))
      continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    out.push_back({fs::relative(entry.path(), root).string(), text.str()});
  }
  BOOST_REQUIRE_MESSAGE(!out.empty(), "no sources under " << folder);
  return out;
}

/// What each #include names: "services/x.hpp" for a project header,
/// "<pqxx/pqxx>" for a library one.
std::vector<std::string> includes_of(const std::string& text) {
  static const std::regex include(R"(#\s*include\s*(["<])([^">]+)[">])");
  std::vector<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), include), end; it != end; ++it)
    out.push_back((*it)[1] == "<" ? "<" + (*it)[2].str() + ">" : (*it)[2].str());
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

/// The project folders a header path may come from (a path without a
/// folder, like "build_paths.hpp", is generated and allowed everywhere).
bool is_project_header(const std::string& include) {
  return include.find('/') != std::string::npos && include[0] != '<';
}

/// Every include of `folder`'s files that is neither a library header nor
/// from one of `allowed` folders, as "file: include".
std::vector<std::string> includes_outside(const std::string& folder,
                                          const std::set<std::string>& allowed) {
  std::vector<std::string> out;
  for (auto& f : sources_in(folder))
    for (auto& inc : includes_of(f.text))
      if (is_project_header(inc) && !allowed.count(inc.substr(0, inc.find('/'))))
        out.push_back(f.path + ": " + inc);
  return out;
}

/// Every include of `folder`'s files that starts with one of `banned`.
std::vector<std::string> includes_of_any(const std::string& folder,
                                         const std::vector<std::string>& banned) {
  std::vector<std::string> out;
  for (auto& f : sources_in(folder))
    for (auto& inc : includes_of(f.text))
      for (auto& b : banned)
        if (starts_with(inc, b))
          out.push_back(f.path + ": " + inc);
  return out;
}

/// Every string literal (plain or raw) that opens with an SQL statement.
std::vector<std::string> sql_literals(const std::string& text) {
  static const std::regex statement(
      R"((?:"|R"\w*\()\s*(SELECT\s|INSERT\s+INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|WITH\s+\w+\s+AS\s*\())");
  std::vector<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), statement), end; it != end; ++it)
    out.push_back(it->str());
  return out;
}

std::string listed(const std::vector<std::string>& lines) {
  std::string out;
  for (auto& l : lines)
    out += "\n  " + l;
  return out;
}

const std::vector<std::string> every_folder_but_persistence = {
    "actors", "app", "config", "domain", "executors", "http", "services"};

} // namespace

BOOST_AUTO_TEST_SUITE(layering)

BOOST_AUTO_TEST_CASE(domain_includes_only_domain_and_no_io_library) {
  auto out = includes_outside("domain", {"domain"});
  BOOST_TEST(out.empty(), "domain/ reaches out:" << listed(out));
  auto io = includes_of_any("domain", {"<pqxx", "<caf", "<httplib"});
  BOOST_TEST(io.empty(), "domain/ does I/O:" << listed(io));
}

BOOST_AUTO_TEST_CASE(persistence_knows_only_domain_and_config) {
  auto out = includes_outside("persistence", {"persistence", "domain", "config"});
  BOOST_TEST(out.empty(), "persistence/ reaches out:" << listed(out));
  auto io = includes_of_any("persistence", {"<caf", "<httplib"});
  BOOST_TEST(io.empty(), "persistence/ talks to actors or HTTP:" << listed(io));
}

BOOST_AUTO_TEST_CASE(services_know_only_domain_config_and_persistence) {
  auto out = includes_outside("services", {"services", "persistence", "domain", "config"});
  BOOST_TEST(out.empty(), "services/ reaches out:" << listed(out));
  auto io = includes_of_any("services", {"<caf", "<httplib"});
  BOOST_TEST(io.empty(), "services/ talks to actors or HTTP:" << listed(io));
}

BOOST_AUTO_TEST_CASE(http_reaches_the_database_only_through_services) {
  auto out = includes_of_any("http", {"persistence/", "<pqxx"});
  BOOST_TEST(out.empty(), "http/ talks to the database:" << listed(out));
}

BOOST_AUTO_TEST_CASE(sql_is_written_only_in_persistence) {
  std::vector<std::string> out;
  for (auto& folder : every_folder_but_persistence)
    for (auto& f : sources_in(folder))
      for (auto& literal : sql_literals(f.text))
        out.push_back(f.path + ": " + literal);
  BOOST_TEST(out.empty(), "SQL outside persistence/:" << listed(out));
}

BOOST_AUTO_TEST_CASE(the_sql_check_sees_plain_and_raw_statements) {
  BOOST_TEST(sql_literals(R"(auto q = "SELECT id FROM nodes";)").size() == 1u);
  BOOST_TEST(sql_literals("auto q = R\"sql(\n  UPDATE nodes SET x = 1)sql\";").size() == 1u);
  BOOST_TEST(sql_literals(R"(tx.exec("WITH moved AS (DELETE FROM t) SELECT 1");)").size() == 1u);
  BOOST_TEST(sql_literals(R"(log::info("SELECTED the venue", {});)").empty());
  BOOST_TEST(sql_literals(R"(auto s = "update the row";)").empty());
}

BOOST_AUTO_TEST_CASE(the_include_check_sees_project_and_library_headers) {
  auto found = includes_of("#include \"persistence/db.hpp\"\n#include <pqxx/pqxx>\n"
                           "#include \"build_paths.hpp\"\n");
  BOOST_TEST(found ==
             (std::vector<std::string>{"persistence/db.hpp", "<pqxx/pqxx>", "build_paths.hpp"}));
  BOOST_TEST(is_project_header("persistence/db.hpp"));
  BOOST_TEST(!is_project_header("<pqxx/pqxx>"));
  BOOST_TEST(!is_project_header("build_paths.hpp"));
}

BOOST_AUTO_TEST_SUITE_END()
