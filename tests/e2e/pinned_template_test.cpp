// SPEC §3 "pinned by the template", as users meet it: a plan that takes an
// EVM node's decimals from the request is refused by `movegate templates
// load` and by a template proposal (422 listing the field); a movement of a
// template that names its asset is refused (422) for another intent.asset.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "build_paths.hpp"
#include "tests/support/serve_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

using key = test::api_key_spec;
const key admin{"pt-admin", "ad00ad00ad00ad00ad00ad00ad00ad02", R"(["admin", "read"])"};
const key creator{"creator", "c0ffee00c0ffee00c0ffee00c0ffee00", R"(["create", "read"])"};

const char* decimals_from_request = R"({"template_key": "erc20_any_decimals", "version": 1,
 "nodes": [{"node_key": "transfer", "action_type": "erc20_transfer", "executor_key": "evm",
   "signer_key": "evm_local", "side_effect": true, "signing_required": true,
   "config": {"chain_id": 1337, "token": "0xe78A0F7E598Cc8b0Bb87894B0F60dD2a88d6a8Ab",
              "decimals": "$ref:input.decimals"}}],
 "edges": []})";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct pinned_fixture : test::serve_fixture {
  pinned_fixture() {
    keys = {admin, creator};
    add_template(read_file(std::string(MG_SOURCE_DIR) + "/templates/erc20_transfer.json"));
  }
  std::string create_body(const std::string& asset, const std::string& idem) {
    return R"({"template_key": "erc20_transfer", "intent": {"asset": ")" + asset +
           R"(", "amount": "1", "destination": "0xFFcf8FDEE72ac11b5c542428B35EEF5769C409f0"},)"
           R"( "idempotency_key": ")" +
           idem + "\"}";
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(pinned_template)

BOOST_FIXTURE_TEST_CASE(pinned_template_decimals_from_the_request_are_refused_at_load,
                        pinned_fixture) {
  auto dir = prefix + "-templates";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/erc20_any_decimals.json") << decimals_from_request;
  test::child load({"templates", "load", dir}, {{"MG_DATABASE_URL", url}}, prefix + "-load.log");
  BOOST_TEST(load.wait(60s) != 0, load.log());
  BOOST_TEST(load.log().find("nodes[0].config.decimals") != std::string::npos, load.log());
  BOOST_TEST(count("SELECT count(*) FROM templates WHERE template_key = 'erc20_any_decimals'") ==
             0);
}

BOOST_FIXTURE_TEST_CASE(pinned_template_decimals_from_the_request_are_refused_at_proposal,
                        pinned_fixture) {
  start("e2e-pinned");
  auto r = client(admin).post("/v3/template-proposals",
                              R"({"template_key": "erc20_any_decimals", "plan": )" +
                                  std::string(decimals_from_request) + "}");
  BOOST_TEST(r.status == 422, r.body);
  BOOST_TEST(r.body.find("plan.nodes[0].config.decimals") != std::string::npos, r.body);
  BOOST_TEST(count("SELECT count(*) FROM template_proposals") == 0);
}

BOOST_FIXTURE_TEST_CASE(pinned_template_another_asset_is_refused_at_create, pinned_fixture) {
  start("e2e-pinned");
  // erc20_transfer moves MINI (risk_controls.asset): max_amount is in MINI.
  auto wrong = client(creator).post("/v3/movements", create_body("USDC", "pt-1"));
  BOOST_TEST(wrong.status == 422, wrong.body);
  BOOST_TEST(wrong.body.find("intent.asset") != std::string::npos, wrong.body);
  BOOST_TEST(count("SELECT count(*) FROM movement_requests") == 0);
  auto right = client(creator).post("/v3/movements", create_body("MINI", "pt-2"));
  BOOST_TEST(right.status == 201, right.body);
}

BOOST_AUTO_TEST_SUITE_END()
