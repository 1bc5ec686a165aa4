// `movegate keys new`: a fresh MG_API_KEYS_FILE entry on stdout.
#include <boost/test/unit_test.hpp>
#include <string>

#include "build_paths.hpp"
#include "domain/api_auth.hpp"
#include "tests/support/process.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

struct run_result {
  int code;
  std::string out;
};

run_result keys(const std::vector<std::string>& args, const std::string& name) {
  std::vector<std::string> all{"keys"};
  all.insert(all.end(), args.begin(), args.end());
  test::child c(all, {}, std::string(MG_BINARY_DIR) + "/e2e-keys-" + name + ".log");
  int code = c.wait(10s);
  return {code, c.log()};
}

} // namespace

BOOST_AUTO_TEST_SUITE(keys_cli)

BOOST_AUTO_TEST_CASE(new_key_is_a_valid_key_file_entry) {
  auto r = keys({"new", "--scopes", "create,read", "--key-id", "ops-7"}, "new");
  BOOST_TEST(r.code == 0);
  auto parsed = api::parse_api_keys("{\"keys\": [" + r.out + "]}");
  BOOST_REQUIRE(parsed.size() == 1u);
  BOOST_TEST(parsed[0].key_id == "ops-7");
  BOOST_TEST(parsed[0].secret.size() == 64u); // 32 random bytes, hex
  BOOST_TEST(parsed[0].secret.find_first_not_of("0123456789abcdef") == std::string::npos);
  BOOST_TEST(parsed[0].scopes.size() == 2u);
  BOOST_TEST((parsed[0].scopes[0] == api::scope::create));
  BOOST_TEST((parsed[0].scopes[1] == api::scope::read));
}

BOOST_AUTO_TEST_CASE(every_key_gets_its_own_secret_and_id) {
  auto a = keys({"new", "--scopes", "approve"}, "a");
  auto b = keys({"new", "--scopes", "approve"}, "b");
  BOOST_REQUIRE(a.code == 0);
  BOOST_REQUIRE(b.code == 0);
  auto ka = api::parse_api_keys("{\"keys\": [" + a.out + "]}").at(0);
  auto kb = api::parse_api_keys("{\"keys\": [" + b.out + "]}").at(0);
  BOOST_TEST(ka.secret != kb.secret);
  BOOST_TEST(ka.key_id != kb.key_id);
}

BOOST_AUTO_TEST_CASE(unknown_scope_exits_2_with_message) {
  auto r = keys({"new", "--scopes", "read,write"}, "bad-scope");
  BOOST_TEST(r.code == 2);
  BOOST_TEST(r.out.find("unknown scope 'write'") != std::string::npos);
  BOOST_TEST(keys({"new"}, "no-scopes").code == 2);
}

BOOST_AUTO_TEST_SUITE_END()
