// SPEC §4 "the engine says what may be signed", against a real `movegate
// serve` that has the `evm_local` signer: an executor offered by a sibling
// (this test process, over the cluster door) prepares EVM transactions that
// differ from what the node's config and intent say — another recipient,
// chain id, value or token, or an exact copy without the attempt's nonce
// reservation. Each is refused before any signature: the node is FAILED
// SIGNING_POLICY_MISMATCH, no sign_result artifact exists and the executor
// is never asked to submit. (Before, the signer compared the executor's
// payload_hash with itself and signed all of them.)
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <fstream>
#include <mutex>

#include "actors/cluster/movement_client.hpp"
#include "actors/cluster/provider_actor.hpp"
#include "domain/evm_transfer_plan.hpp"
#include "domain/evm_tx.hpp"
#include "tests/support/cluster_fixture.hpp"
#include "tests/support/ganache.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

using key = test::api_key_spec;
const key admin{"sp-admin", "ad00ad00ad00ad00ad00ad00ad00ad01", R"(["admin", "read"])"};

const char* alice = "0xFFcf8FDEE72ac11b5c542428B35EEF5769C409f0";
const char* mallory = "0x22d491Bde2303f2f43325b2108D26f1eAbA1e32b";
const char* token = "0xe78A0F7E598Cc8b0Bb87894B0F60dD2a88d6a8Ab";
const char* other_token = "0xCfEB869F69431e42cdB54A4F4f105C19C080A601";

const std::string native_template = R"({"template_key": "remote_eth", "version": 1,
    "risk_controls": {"asset": "ETH", "max_fee_wei": "10000000000000000"},
    "nodes": [{"node_key": "send", "action_type": "evm_transfer",
               "executor_key": "remote_evm", "signer_key": "evm_local",
               "side_effect": true, "signing_required": true,
               "config": {"chain_id": 1337}}],
    "edges": []})";
const std::string token_template = std::string(R"({"template_key": "remote_mini", "version": 1,
    "risk_controls": {"asset": "MINI", "max_fee_wei": "10000000000000000"},
    "nodes": [{"node_key": "send", "action_type": "erc20_transfer",
               "executor_key": "remote_evm", "signer_key": "evm_local",
               "side_effect": true, "signing_required": true,
               "config": {"chain_id": 1337, "decimals": 6, "token": ")") +
                                   token + R"("}}],
    "edges": []})";

/// What the hostile executor changes in the transaction the node asks for.
enum class tamper { recipient, chain_id, value, token, none };

/// Prepares the node's transfer as an EIP-1559 transaction, then changes
/// one thing; counts submits (there must be none).
struct hostile_executor : domain::executor {
  std::atomic<tamper> mode{tamper::none};
  std::atomic<int> prepares{0};
  std::atomic<int> submits{0};

  std::optional<domain::step_result> preflight(const domain::execution_context&) override {
    return std::nullopt;
  }
  std::optional<domain::prepared_action> prepare(const domain::execution_context& ctx) override {
    ++prepares;
    auto c = domain::read_evm_config(ctx);
    auto plan = domain::plan_evm_transfer(ctx, c);
    domain::eip1559_tx tx;
    tx.chain_id = c.chain_id;
    tx.nonce = 0;
    tx.max_priority_fee_per_gas = 1000000000;
    tx.max_fee_per_gas = 2000000000;
    tx.gas_limit = ctx.action_type == domain::evm_native_transfer ? 21000 : 65000;
    tx.to = plan.to;
    tx.value = plan.value;
    tx.data = plan.data;
    switch (mode.load()) {
    case tamper::recipient:
      if (ctx.action_type == domain::evm_native_transfer)
        tx.to = *domain::parse_evm_address(mallory);
      else
        tx.data = domain::erc20_transfer_calldata(*domain::parse_evm_address(mallory), plan.amount);
      break;
    case tamper::chain_id:
      tx.chain_id = 1;
      break;
    case tamper::value:
      if (ctx.action_type == domain::evm_native_transfer)
        tx.value = *domain::checked_mul(plan.value, 100);
      else
        tx.data = domain::erc20_transfer_calldata(*domain::parse_evm_address(alice),
                                                  *domain::checked_mul(plan.amount, 100));
      break;
    case tamper::token:
      tx.to = *domain::parse_evm_address(other_token);
      break;
    case tamper::none:
      break;
    }
    domain::prepared_action a;
    a.action_type = ctx.action_type;
    a.payload_format = "evm_signing_data";
    a.payload = domain::to_0x_hex(domain::signing_data(tx));
    a.payload_hash = domain::to_0x_hex(domain::signing_hash(tx));
    return a;
  }
  domain::step_result submit(const domain::execution_context&, const domain::prepared_action&,
                             const domain::sign_result*) override {
    ++submits;
    domain::step_result r;
    r.next_state = domain::node_state::submitted;
    return r;
  }
  domain::step_result observe(const domain::execution_context&) override {
    domain::step_result r;
    r.next_state = domain::node_state::completed;
    return r;
  }
  domain::recover_result recover(const domain::execution_context&) override { return {}; }
  domain::health_result health() override { return {}; }
};

struct remote_signing_fixture : test::cluster_serve_fixture {
  std::vector<caf::actor> providers;
  std::shared_ptr<hostile_executor> hostile = std::make_shared<hostile_executor>();
  std::unique_ptr<cluster::movement_client> session_;

  remote_signing_fixture() {
    keys = {admin, test::cluster_keys::creator, test::cluster_keys::approver};
    add_template(native_template);
    add_template(token_template);
  }
  ~remote_signing_fixture() {
    for (auto& p : providers)
      caf::anon_send_exit(p, caf::exit_reason::kill);
    providers.clear();
    session_.reset();
    stop();
  }

  /// serve with the evm_local signer and the hostile executor registered.
  void start_with_hostile_executor(const std::string& key_file) {
    start_cluster("e2e-signing", {{"MG_EVM_SIGNER_KEY_FILE", key_file}});
    session_ = session(admin, 10s, &sys());
    auto actor = cluster::spawn_executor_actor(sys(), hostile);
    providers.push_back(caf::actor_cast<caf::actor>(actor));
    auto r = session_->register_executor("remote_evm", actor);
    BOOST_REQUIRE_MESSAGE(r.status == 200, r.body);
  }

  std::string move(const std::string& template_key, const std::string& asset,
                   const std::string& amount) {
    static int n = 0;
    auto body = R"({"template_key": ")" + template_key + R"(", "intent": {"asset": ")" + asset +
                R"(", "amount": ")" + amount + R"(", "destination": ")" + alice +
                R"("}, "idempotency_key": "sp-)" + std::to_string(++n) + "\"}";
    auto created = client(test::cluster_keys::creator).post("/v3/movements", body);
    BOOST_REQUIRE_MESSAGE(created.status == 201, created.body);
    auto id = test::json_field(created.body, "id");
    auto approved =
        client(test::cluster_keys::approver).post("/v3/movements/" + id + "/approve", "{}");
    BOOST_REQUIRE_MESSAGE(approved.status == 200, approved.body);
    return id;
  }

  std::string node_column(const std::string& id, const std::string& column) {
    return scalar("SELECT " + column + " FROM movement_request_nodes WHERE request_id = '" + id +
                  "'");
  }

  /// The node ends FAILED SIGNING_POLICY_MISMATCH naming `field`, with no
  /// signature anywhere.
  void refused_before_signing(const std::string& id, const std::string& field) {
    BOOST_TEST_REQUIRE(wait_for("SELECT node_state = 'FAILED' FROM movement_request_nodes"
                                " WHERE request_id = '" +
                                    id + "'",
                                20s),
                       server->log());
    BOOST_TEST(node_column(id, "error_code") == "SIGNING_POLICY_MISMATCH");
    auto detail = node_column(id, "error_detail");
    BOOST_TEST(detail.rfind(field, 0) == 0, detail);
    BOOST_TEST(count("SELECT count(*) FROM node_artifacts a JOIN movement_request_nodes n"
                     " ON n.id = a.node_id WHERE n.request_id = '" +
                     id + "' AND a.kind = 'sign_result'") == 0);
    BOOST_TEST(count("SELECT count(*) FROM node_artifacts a JOIN movement_request_nodes n"
                     " ON n.id = a.node_id WHERE n.request_id = '" +
                     id + "' AND a.kind = 'prepared_action'") == 1);
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(signing_policy_remote)

BOOST_FIXTURE_TEST_CASE(signing_policy_remote_executor_cannot_get_a_tampered_transfer_signed,
                        remote_signing_fixture) {
  // ganache account 0's key: no chain is needed, nothing may reach one.
  const std::string key_file = prefix + "-evm.key";
  std::ofstream(key_file) << test::ganache_wallet(0).key << "\n";
  start_with_hostile_executor(key_file);
  const std::pair<tamper, const char*> native_cases[] = {{tamper::recipient, "recipient"},
                                                         {tamper::chain_id, "chain_id"},
                                                         {tamper::value, "value"},
                                                         {tamper::none, "nonce"}};
  for (auto& [how, field] : native_cases) {
    hostile->mode = how;
    auto id = move("remote_eth", "ETH", "1.5");
    refused_before_signing(id, field);
  }
  const std::pair<tamper, const char*> token_cases[] = {{tamper::token, "token"},
                                                        {tamper::recipient, "calldata"},
                                                        {tamper::value, "calldata"},
                                                        {tamper::chain_id, "chain_id"}};
  for (auto& [how, field] : token_cases) {
    hostile->mode = how;
    auto id = move("remote_mini", "MINI", "12.345678");
    refused_before_signing(id, field);
  }
  BOOST_TEST(hostile->prepares.load() == 8);
  BOOST_TEST(hostile->submits.load() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
