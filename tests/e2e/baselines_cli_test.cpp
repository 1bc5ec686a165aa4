// `movegate baselines load FILE` as an operator runs it: addresses and hashes
// normalised, a second load of the same file is a no-op, a changed hash
// restarts verification, and a file with one bad entry loads nothing.
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <unistd.h>

#include "build_paths.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/process.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

const char* const hash_a = "0xAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const char* const hash_b = "0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

std::string write_file(const std::string& tag, const std::string& content) {
  auto path =
      std::string(MG_BINARY_DIR) + "/baselines-" + tag + "-" + std::to_string(getpid()) + ".json";
  std::ofstream(path) << content;
  return path;
}

std::string file_with(const std::string& hash) {
  // USDC's EIP-55 address on mainnet, and a lower-case one.
  return R"({"baselines": [
    {"chain_id": 1, "address": "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", "code_hash": ")" +
         hash + R"(", "label": "USDC"},
    {"chain_id": 137, "address": "0x2791bca1f2de4661ed88a30c99a7a9449aa84174",
     "code_hash": ")" +
         hash_b + R"("}]})";
}

struct load_result {
  int code;
  std::string out;
};

load_result load(test::db_fixture& f, const std::string& path, const std::string& tag) {
  test::child c({"baselines", "load", path}, {{"MG_DATABASE_URL", f.url}},
                std::string(MG_BINARY_DIR) + "/e2e-baselines-" + tag + ".log");
  int code = c.wait(30s);
  return {code, c.log()};
}

} // namespace

BOOST_AUTO_TEST_SUITE(baselines_cli)

BOOST_FIXTURE_TEST_CASE(load_is_normalised_idempotent_and_resets_on_change, test::db_fixture) {
  auto path = write_file("ok", file_with(hash_a));
  auto first = load(*this, path, "first");
  BOOST_TEST(first.code == 0, first.out);
  BOOST_TEST(first.out.find("2 baselines in " + path + ", 2 new or changed") != std::string::npos,
             first.out);
  BOOST_TEST(scalar("SELECT address || ' ' || expected_code_hash || ' ' || label || ' ' ||"
                    " drift_state FROM registry_baselines WHERE chain_id = 1") ==
             "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48 0x" + std::string(64, 'a') +
                 " USDC unverified");
  auto again = load(*this, path, "again");
  BOOST_TEST(again.out.find("0 new or changed") != std::string::npos, again.out);

  exec("UPDATE registry_baselines SET drift_state = 'ok'");
  auto changed = load(*this, write_file("changed", file_with(hash_b)), "changed");
  BOOST_TEST(changed.out.find("1 new or changed") != std::string::npos, changed.out);
  BOOST_TEST(scalar("SELECT drift_state FROM registry_baselines WHERE chain_id = 1") ==
             "unverified");
  BOOST_TEST(scalar("SELECT drift_state FROM registry_baselines WHERE chain_id = 137") == "ok");
}

BOOST_FIXTURE_TEST_CASE(a_bad_entry_loads_nothing, test::db_fixture) {
  // The first entry is fine; the second has a broken EIP-55 checksum.
  auto bad = write_file("bad", R"({"baselines": [
    {"chain_id": 1, "address": "0x2791bca1f2de4661ed88a30c99a7a9449aa84174", "code_hash": ")" +
                                   std::string(hash_b) + R"("},
    {"chain_id": 1, "address": "0xA0B86991c6218b36c1d19D4a2e9Eb0cE3606eB48", "code_hash": ")" +
                                   std::string(hash_b) + R"("}]})");
  auto r = load(*this, bad, "bad");
  BOOST_TEST(r.code == 1);
  BOOST_TEST(r.out.find("baselines[1]: address") != std::string::npos, r.out);
  auto short_hash = write_file("short", R"({"baselines": [
    {"chain_id": 1, "address": "0x2791bca1f2de4661ed88a30c99a7a9449aa84174", "code_hash": "0xabcd"}]})");
  r = load(*this, short_hash, "short");
  BOOST_TEST(r.code == 1);
  BOOST_TEST(r.out.find("code_hash") != std::string::npos, r.out);
  BOOST_TEST(count("SELECT count(*) FROM registry_baselines") == 0);
}

BOOST_AUTO_TEST_SUITE_END()
