// The `evm` executor's steps against a real local chain (ganache) and the
// real database, called directly: preflight refusals, an attempt that is
// prepared but never broadcast is fenced by a 0-value self-send at its nonce
// (and can never broadcast afterwards), and an attempt whose bytes were
// stored but never reached the chain is rebroadcast by recover — the same
// transaction, never a second one.
#include <boost/test/unit_test.hpp>

#include "domain/evm_tx.hpp"
#include "domain/json.hpp"
#include "executors/evm_executor.hpp"
#include "persistence/db.hpp"
#include "persistence/evm_nonce_store.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/ganache.hpp"

using namespace mg;
using namespace mg::test;

namespace {

const char* recipient = "0xFFcf8FDEE72ac11b5c542428B35EEF5769C409f0";

struct evm_fixture : db_fixture {
  ganache_chain chain;
  std::shared_ptr<executors::evm_local_signer> signer;
  std::unique_ptr<executors::evm_executor> evm;

  evm_fixture() {
    signer = std::make_shared<executors::evm_local_signer>(chain.key_file(0));
    auto pool = std::make_shared<db::connection_pool>(url, 2);
    evm = std::make_unique<executors::evm_executor>(
        std::map<std::uint64_t, std::string>{{ganache_chain_id, chain.url},
                                             {1, chain.url}}, // misconfigured on purpose
        10, pool, signer);
  }

  domain::execution_context transfer(const std::string& amount, const std::string& to,
                                     const std::string& config_extra = "", int attempt = 1) {
    domain::execution_context ctx;
    ctx.request_node_id = "00000000-0000-4000-8000-000000000001";
    ctx.attempt_no = attempt;
    ctx.idempotency_key = ctx.request_node_id + ":" + std::to_string(attempt);
    ctx.action_type = "evm_transfer";
    ctx.intent = R"({"asset": "ETH", "amount": ")" + amount + R"(", "destination": ")" + to + "\"}";
    ctx.node_config = R"({"chain_id": 1337, "poll_seconds": 0.1)" + config_extra + "}";
    return ctx;
  }

  domain::sign_result sign(const domain::prepared_action& a) {
    domain::sign_request r;
    r.payload_format = a.payload_format;
    r.payload = a.payload;
    r.payload_hash = a.payload_hash;
    r.intent.allowed_payload_hash = a.payload_hash;
    return signer->sign(r);
  }

  std::string sender_bytes() { return *domain::parse_evm_address(signer->address()); }
  std::string mined_count() {
    return chain.rpc().transaction_count(sender_bytes(), "latest").to_decimal();
  }
};

std::string code_of(const std::optional<domain::step_result>& r) {
  return r ? r->error_code : "";
}

} // namespace

BOOST_AUTO_TEST_SUITE(evm_executor)

BOOST_FIXTURE_TEST_CASE(evm_preflight_refuses_what_cannot_be_sent, evm_fixture) {
  BOOST_TEST(code_of(evm->preflight(transfer("1", recipient))) == "");
  // Lower-case carries no checksum: a typo would go unnoticed.
  BOOST_TEST(code_of(evm->preflight(transfer("1", "0xffcf8fdee72ac11b5c542428b35eef5769c409f0"))) ==
             "INVALID_DESTINATION");
  BOOST_TEST(code_of(evm->preflight(transfer("1", "0xFFcf8FDEE72ac11b5c542428B35EEF5769C409F0"))) ==
             "INVALID_DESTINATION");
  BOOST_TEST(code_of(evm->preflight(transfer("0.0000000000000000001", recipient))) ==
             "INVALID_AMOUNT");
  BOOST_TEST(code_of(evm->preflight(transfer("1e3", recipient))) == "INVALID_AMOUNT");
  BOOST_TEST(code_of(evm->preflight(transfer("1000", recipient))) == "INSUFFICIENT_BALANCE");
  auto wrong_chain = transfer("1", recipient);
  wrong_chain.node_config = R"({"chain_id": 1})";
  BOOST_TEST(code_of(evm->preflight(wrong_chain)) == "CHAIN_ID_MISMATCH");
  auto unknown_chain = transfer("1", recipient);
  unknown_chain.node_config = R"({"chain_id": 5})";
  BOOST_TEST(code_of(evm->preflight(unknown_chain)) == "CHAIN_NOT_CONFIGURED");
  auto other = transfer("1", recipient);
  other.action_type = "swap";
  BOOST_TEST(code_of(evm->preflight(other)) == "UNSUPPORTED_ACTION");
  BOOST_TEST(mined_count() == "0"); // nothing was sent
}

BOOST_FIXTURE_TEST_CASE(evm_abandon_gives_the_nonce_back_at_once_unless_signed, evm_fixture) {
  // The dispatcher abandons a prepare whose signer refused: its nonce is
  // the next attempt's, without waiting for the reaper.
  auto first = transfer("1", recipient);
  auto action = evm->prepare(first);
  BOOST_REQUIRE(action);
  evm->abandon(first, *action);
  BOOST_TEST(scalar("SELECT nonce || ':' || state || ':' || (idempotency_key IS NULL)"
                    " FROM evm_nonce_reservation") == "0:reclaimed:true");
  auto retry = transfer("1", recipient, "", 2);
  auto again = evm->prepare(retry);
  BOOST_REQUIRE(again);
  BOOST_TEST(scalar("SELECT nonce || ':' || state || ':' || idempotency_key"
                    " FROM evm_nonce_reservation") == "0:reserved:" + retry.idempotency_key);

  // Once signed bytes are stored (broadcast), abandon releases nothing:
  // those bytes may land, so the nonce is theirs.
  auto signature = sign(*again);
  BOOST_CHECK(evm->submit(retry, *again, &signature).next_state == domain::node_state::submitted);
  evm->abandon(retry, *again);
  BOOST_TEST(scalar("SELECT state FROM evm_nonce_reservation WHERE nonce = 0") != "reclaimed");
  BOOST_TEST(mined_count() == "1");
}

BOOST_FIXTURE_TEST_CASE(evm_recover_fences_an_unbroadcast_attempt_with_a_self_send, evm_fixture) {
  auto ctx = transfer("1", recipient);
  auto action = evm->prepare(ctx);
  BOOST_REQUIRE(action);
  BOOST_TEST(scalar("SELECT nonce || ':' || state FROM evm_nonce_reservation") == "0:reserved");
  auto signature = sign(*action);

  // The process died after the SUBMITTING commit, before submit stored
  // anything: recovery cannot know whether bytes exist elsewhere, so it
  // mines a 0-value self-send at the nonce.
  auto r = evm->recover(ctx);
  BOOST_CHECK(r.outcome == domain::recover_outcome::fenced);
  BOOST_TEST(mined_count() == "1");
  auto fence_hash = scalar("SELECT tx_hash FROM evm_nonce_reservation WHERE nonce = 0");
  auto fence = json::parse(
      chain.rpc().call("eth_getTransactionByHash", "[" + json::quote(fence_hash) + "]"));
  BOOST_REQUIRE(fence && fence->IsObject());
  BOOST_TEST(json::get_string(*fence, "to") == json::get_string(*fence, "from"));
  BOOST_TEST(json::get_string(*fence, "value") == "0x0");
  BOOST_TEST(json::get_string(*fence, "nonce") == "0x0");

  // A late submit of the fenced attempt is refused before it broadcasts.
  auto late = evm->submit(ctx, *action, &signature);
  BOOST_TEST(late.error_code == domain::fenced_error_code);
  BOOST_TEST(mined_count() == "1");
  BOOST_CHECK(evm->recover(ctx).outcome == domain::recover_outcome::fenced);

  // The retry takes the next nonce and goes through.
  auto retry = transfer("1", recipient, "", 2);
  auto second = evm->prepare(retry);
  auto sig2 = sign(*second);
  auto sent = evm->submit(retry, *second, &sig2);
  BOOST_CHECK(sent.next_state == domain::node_state::submitted);
  BOOST_TEST(mined_count() == "2");
  BOOST_TEST(scalar("SELECT nonce FROM evm_tx_attempts WHERE status = 'signed'") == "1");
}

BOOST_FIXTURE_TEST_CASE(evm_recover_rebroadcasts_the_stored_bytes_and_nothing_else, evm_fixture) {
  auto ctx = transfer("2.5", recipient);
  auto action = evm->prepare(ctx);
  auto signature = sign(*action);
  // Store the bytes as submit does, but "crash" before the broadcast.
  auto tx = domain::parse_eip1559_signing_data(*domain::parse_0x_hex(action->payload));
  auto raw = domain::signed_raw(*tx, *domain::parse_signature_65(signature.signature));
  auto hash = domain::transaction_hash(raw);
  {
    pqxx::connection c(url);
    BOOST_CHECK(db::store_signed(c, {1337, "0x90f8bf6a479f320ead074411a4b0e7944ea8c9c1"},
                                 {ctx.idempotency_key, ctx.request_node_id, 1}, 0, raw,
                                 domain::to_0x_hex(hash)) == db::store_outcome::stored);
  }
  auto before = chain.rpc().balance(*domain::parse_evm_address(recipient));
  auto r = evm->recover(ctx);
  BOOST_CHECK(r.outcome == domain::recover_outcome::found);
  BOOST_CHECK(r.result.next_state == domain::node_state::submitted);
  BOOST_TEST(r.result.provider_refs.find(domain::to_0x_hex(hash)) != std::string::npos);
  // Found on chain now: a second recover does not send anything new.
  BOOST_CHECK(evm->recover(ctx).outcome == domain::recover_outcome::found);
  BOOST_TEST(mined_count() == "1");
  auto after = chain.rpc().balance(*domain::parse_evm_address(recipient));
  BOOST_TEST((*domain::checked_sub(after, before)).to_decimal() == "2500000000000000000");
  // And observe completes it (one confirmation: the receipt's own block).
  ctx.provider_refs = r.result.provider_refs;
  auto seen = evm->observe(ctx);
  BOOST_CHECK(seen.next_state == domain::node_state::completed);
  BOOST_TEST(scalar("SELECT state FROM evm_nonce_reservation") == "consumed");
}

BOOST_FIXTURE_TEST_CASE(evm_submit_refuses_a_signature_by_another_key_or_for_other_bytes,
                        evm_fixture) {
  auto ctx = transfer("1", recipient);
  auto action = evm->prepare(ctx);
  // Signed by ganache account 1, not the executor's sender.
  ganache_chain other_keys;
  executors::evm_local_signer stranger(other_keys.key_file(1));
  domain::sign_request req;
  req.payload_format = action->payload_format;
  req.payload = action->payload;
  req.payload_hash = action->payload_hash;
  req.intent.allowed_payload_hash = action->payload_hash;
  auto foreign = stranger.sign(req);
  BOOST_TEST(evm->submit(ctx, *action, &foreign).error_code == "SIGNATURE_MISMATCH");
  // A payload that moves more than the intent says.
  auto more = transfer("5", recipient);
  auto signature = sign(*action);
  BOOST_TEST(evm->submit(more, *action, &signature).error_code == "PAYLOAD_MISMATCH");
  BOOST_TEST(mined_count() == "0");
  BOOST_TEST(count("SELECT count(*) FROM evm_tx_attempts") == 0);
}

BOOST_AUTO_TEST_SUITE_END()
