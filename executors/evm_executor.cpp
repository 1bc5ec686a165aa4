#include "executors/evm_executor.hpp"

#include <chrono>
#include <cmath>
#include <thread>

#include "config/log.hpp"
#include "domain/evm_amount.hpp"
#include "domain/evm_transfer_plan.hpp"
#include "domain/evm_tx.hpp"
#include "domain/hash.hpp"
#include "domain/json.hpp"
#include "domain/json_writer.hpp"
#include "domain/keccak.hpp"
#include "persistence/evm_nonce_store.hpp"

namespace mg::executors {

using domain::node_state;
using domain::step_result;
using domain::uint256;

namespace {

constexpr std::uint64_t native_transfer_gas = 21000;
constexpr std::uint64_t token_transfer_gas_bound = 100000;

step_result failed(const std::string& code, const std::string& detail) {
  step_result r;
  r.next_state = node_state::failed;
  r.error_code = code;
  r.error_detail = detail;
  return r;
}

step_result in_state(node_state s, double poll_seconds) {
  step_result r;
  r.next_state = s;
  r.retry_after_seconds = poll_seconds;
  return r;
}

std::string lower(std::string s) {
  for (char& ch : s)
    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

std::string submit_refs(const std::string& tx_hash, std::uint64_t nonce, const std::string& from,
                        std::uint64_t chain_id) {
  return json::writer()
      .begin_object()
      .member("tx_hash", domain::to_0x_hex(tx_hash))
      .member("nonce", nonce)
      .member("from", lower(from))
      .member("chain_id", chain_id)
      .end_object()
      .str();
}

/// {"tx_hash": 0x-hex}: the refs (and payload) of a transaction's observation.
std::string tx_hash_refs(const std::string& tx_hash) {
  return json::writer()
      .begin_object()
      .member("tx_hash", domain::to_0x_hex(tx_hash))
      .end_object()
      .str();
}

/// Fees for the next block: tip as the node suggests, cap 2 × base fee + tip
/// (room for six full blocks of base-fee growth).
struct fees {
  uint256 priority;
  uint256 max_fee;
};

fees current_fees(const evm_rpc& rpc) {
  fees f;
  f.priority = rpc.max_priority_fee();
  auto doubled = domain::checked_mul(rpc.base_fee(), 2);
  auto cap = doubled ? domain::checked_add(*doubled, f.priority) : std::nullopt;
  if (!cap)
    throw domain::executor_error("fee arithmetic overflowed");
  f.max_fee = *cap;
  return f;
}

uint256 product(const uint256& a, const uint256& b) {
  auto p = domain::checked_mul(a, b);
  if (!p)
    throw domain::evm_refusal{"INSUFFICIENT_BALANCE", "amount and fees overflow 2^256"};
  return *p;
}

uint256 sum(const uint256& a, const uint256& b) {
  auto s = domain::checked_add(a, b);
  if (!s)
    throw domain::evm_refusal{"INSUFFICIENT_BALANCE", "amount and fees overflow 2^256"};
  return *s;
}

uint256 token_balance(const evm_rpc& rpc, const std::string& token, const std::string& owner) {
  std::string call_data = std::string("\x70\xa0\x82\x31", 4) + std::string(12, '\0') + owner;
  auto out = rpc.eth_call({owner, token, uint256(0), call_data, std::nullopt}, "latest");
  auto v = uint256::from_big_endian(out.substr(0, 32));
  if (out.size() < 32 || !v)
    throw domain::executor_error("balanceOf answered " + std::to_string(out.size()) + " bytes");
  return *v;
}

/// The token's `decimals()` (selector 313ce567), or nullopt when the
/// address answers no 32-byte word below 256 (no contract there, or not an
/// ERC-20).
std::optional<int> token_decimals(const evm_rpc& rpc, const std::string& token,
                                  const std::string& caller) {
  auto out = rpc.eth_call(
      {caller, token, uint256(0), std::string("\x31\x3c\xe5\x67", 4), std::nullopt}, "latest");
  auto v = out.size() == 32 ? uint256::from_big_endian(out) : std::nullopt;
  auto small = v ? v->to_u64() : std::nullopt;
  if (!small || *small > 255)
    return std::nullopt;
  return static_cast<int>(*small);
}

bool says(const rpc_refused& e, const char* text) {
  return lower(e.what()).find(text) != std::string::npos;
}

/// The reason a mined transaction reverted: replayed with eth_call at its
/// block, the node answers with the revert message.
std::string revert_reason(const evm_rpc& rpc, const std::string& tx_hash,
                          std::uint64_t block_number) {
  try {
    auto tx = json::parse(rpc.call(
        "eth_getTransactionByHash",
        json::writer().begin_array().string(domain::to_0x_hex(tx_hash)).end_array().str()));
    if (!tx || !tx->IsObject())
      return "reverted";
    evm_transaction_call call;
    call.from = domain::parse_0x_hex(json::get_string(*tx, "from")).value_or("");
    call.to = domain::parse_0x_hex(json::get_string(*tx, "to")).value_or("");
    call.value = uint256::from_hex(json::get_string(*tx, "value")).value_or(uint256(0));
    call.data = domain::parse_0x_hex(json::get_string(*tx, "input")).value_or("");
    call.gas = uint256::from_hex(json::get_string(*tx, "gas"));
    rpc.eth_call(call, uint256(block_number).to_hex());
    return "reverted";
  } catch (const rpc_refused& e) {
    return e.what();
  } catch (const std::exception&) {
    return "reverted";
  }
}

std::string refs_tx_hash(const std::string& provider_refs) {
  auto refs = json::parse(provider_refs);
  if (!refs || !refs->IsObject())
    return {};
  return domain::parse_0x_hex(json::get_string(*refs, "tx_hash")).value_or("");
}

/// Hashes are stored as 0x hex; the chain calls take bytes.
std::string bytes_of_hash(const std::string& hex) {
  return domain::parse_0x_hex(hex).value_or("");
}

db::nonce_owner owner_of(const domain::execution_context& ctx) {
  return {ctx.idempotency_key, ctx.request_node_id, ctx.attempt_no};
}

} // namespace

evm_executor::evm_executor(const std::map<std::uint64_t, std::string>& rpc_urls,
                           double rpc_timeout_seconds, std::shared_ptr<db::connection_pool> pool,
                           std::shared_ptr<evm_local_signer> signer)
    : rpcs_(evm_rpc_clients(rpc_urls, rpc_timeout_seconds)), pool_(std::move(pool)),
      signer_(std::move(signer)) {}

const evm_rpc& evm_executor::rpc_for(std::uint64_t chain_id) const {
  auto it = rpcs_.find(chain_id);
  if (it == rpcs_.end())
    throw domain::evm_refusal{"CHAIN_NOT_CONFIGURED",
                              "no MG_EVM_RPC_URLS endpoint for chain " + std::to_string(chain_id)};
  return it->second;
}

std::optional<step_result> evm_executor::preflight(const domain::execution_context& ctx) {
  try {
    if (!domain::is_evm_transfer(ctx.action_type) &&
        ctx.action_type != domain::evm_finality_observe)
      return failed("UNSUPPORTED_ACTION",
                    "evm executes " + std::string(domain::evm_native_transfer) + ", " +
                        domain::evm_token_transfer + " and " + domain::evm_finality_observe);
    auto c = domain::read_evm_config(ctx);
    const auto& rpc = rpc_for(c.chain_id);
    if (auto answered = rpc.chain_id(); answered != c.chain_id)
      return failed("CHAIN_ID_MISMATCH", "config.chain_id " + std::to_string(c.chain_id) +
                                             " but the endpoint is chain " +
                                             std::to_string(answered));
    if (!domain::is_evm_transfer(ctx.action_type))
      return std::nullopt;
    auto plan = domain::plan_evm_transfer(ctx, c);
    const std::string from = *domain::parse_evm_address(sender());
    auto f = current_fees(rpc);
    const bool native = ctx.action_type == domain::evm_native_transfer;
    if (!native) {
      // SPEC §3: the template's decimals are what the amount was converted
      // with; the chain's token must agree or the amount means something else.
      auto on_chain = token_decimals(rpc, c.token, from);
      if (on_chain != c.decimals)
        return failed("DECIMALS_MISMATCH",
                      "config.decimals " + std::to_string(c.decimals) +
                          " but the token's decimals() " +
                          (on_chain ? "is " + std::to_string(*on_chain) : "gives no answer"));
    }
    uint256 gas_bound =
        c.gas_limit.value_or(native ? native_transfer_gas : token_transfer_gas_bound);
    uint256 needed = sum(plan.value, product(gas_bound, f.max_fee));
    if (rpc.balance(from) < needed)
      return failed("INSUFFICIENT_BALANCE",
                    "balance does not cover amount + max fee (" + needed.to_decimal() + " wei)");
    if (!native && token_balance(rpc, c.token, from) < plan.amount)
      return failed("INSUFFICIENT_TOKEN_BALANCE", "token balance does not cover the amount");
    return std::nullopt;
  } catch (const domain::evm_refusal& r) {
    return failed(r.code, r.detail);
  }
}

void evm_executor::abandon(const domain::execution_context& ctx, const domain::prepared_action&) {
  auto conn = pool_->acquire();
  if (db::release_reservation(*conn, ctx.idempotency_key))
    log::info("evm nonce released: the attempt ended before submit",
              {{"node_id", ctx.request_node_id}, {"attempt", ctx.attempt_no}});
}

std::optional<domain::prepared_action> evm_executor::prepare(const domain::execution_context& ctx) {
  const auto c = domain::read_evm_config(ctx);
  domain::prepared_action a;
  a.action_type = ctx.action_type;
  if (!domain::is_evm_transfer(ctx.action_type)) {
    a.payload = tx_hash_refs(c.tx_hash);
    a.payload_hash = "0x" + domain::sha256_hex(a.payload);
    return a;
  }
  const auto& rpc = rpc_for(c.chain_id);
  const auto plan = domain::plan_evm_transfer(ctx, c);
  const std::string from = *domain::parse_evm_address(sender());
  auto f = current_fees(rpc);
  uint256 gas = c.gas_limit
                    ? *c.gas_limit
                    : rpc.estimate_gas({from, plan.to, plan.value, plan.data, std::nullopt});
  if (!c.gas_limit && ctx.action_type == domain::evm_token_transfer) {
    // Token state can change between estimate and inclusion: 25 % headroom.
    uint256 quarter = gas;
    quarter.divide_small(4);
    gas = *domain::checked_add(gas, quarter);
  }
  auto mined = rpc.transaction_count(from, "latest");
  auto pending = rpc.transaction_count(from, "pending");
  auto conn = pool_->acquire();
  const db::evm_sender s{c.chain_id, lower(sender())};
  const auto nonce = db::reserve_nonce(*conn, s, owner_of(ctx), mined.to_u64().value_or(0),
                                       pending.to_u64().value_or(0));
  domain::eip1559_tx tx;
  tx.chain_id = c.chain_id;
  tx.nonce = nonce;
  tx.max_priority_fee_per_gas = f.priority;
  tx.max_fee_per_gas = f.max_fee;
  tx.gas_limit = gas;
  tx.to = plan.to;
  tx.value = plan.value;
  tx.data = plan.data;
  a.payload_format = evm_signing_data_format;
  a.payload = domain::to_0x_hex(domain::signing_data(tx));
  a.payload_hash = domain::to_0x_hex(domain::signing_hash(tx));
  log::info("evm nonce reserved", {{"node_id", ctx.request_node_id},
                                   {"attempt", ctx.attempt_no},
                                   {"chain_id", std::to_string(c.chain_id)},
                                   {"nonce", std::to_string(nonce)}});
  return a;
}

step_result evm_executor::submit(const domain::execution_context& ctx,
                                 const domain::prepared_action& action,
                                 const domain::sign_result* signature) {
  domain::evm_node_config c;
  domain::evm_transfer_plan plan;
  try {
    c = domain::read_evm_config(ctx);
    if (!domain::is_evm_transfer(ctx.action_type)) {
      auto r = in_state(node_state::submitted, c.poll_seconds);
      r.provider_refs = tx_hash_refs(c.tx_hash);
      r.provider_ref_id = domain::to_0x_hex(c.tx_hash);
      return r;
    }
    plan = domain::plan_evm_transfer(ctx, c);
  } catch (const domain::evm_refusal& r) {
    return failed(r.code, r.detail);
  }
  if (!signature)
    return failed("NO_SIGNATURE", "an EVM transfer must be signed (signing_required)");
  // Check exactly what the signature covers before anything leaves.
  auto signing_data = domain::parse_0x_hex(action.payload);
  auto tx = signing_data ? domain::parse_eip1559_signing_data(*signing_data) : std::nullopt;
  if (!tx || domain::to_0x_hex(domain::keccak256(*signing_data)) != lower(action.payload_hash))
    return failed("PAYLOAD_MISMATCH", "the prepared payload is not the signed transaction");
  if (tx->chain_id != c.chain_id || tx->to != plan.to || tx->value != plan.value ||
      tx->data != plan.data)
    return failed("PAYLOAD_MISMATCH", "the signed transaction does not move the intent's amount");
  auto sig = domain::parse_signature_65(signature->signature);
  auto signed_by = sig ? recover_evm_address(domain::signing_hash(*tx), *sig) : std::nullopt;
  if (!signed_by || lower(*signed_by) != lower(sender()))
    return failed("SIGNATURE_MISMATCH", "the signature does not recover to " + sender());
  const auto raw = domain::signed_raw(*tx, *sig);
  const auto hash = domain::transaction_hash(raw);
  const std::uint64_t nonce = tx->nonce.to_u64().value_or(0);
  const db::evm_sender s{c.chain_id, lower(sender())};
  {
    auto conn = pool_->acquire();
    if (db::store_signed(*conn, s, owner_of(ctx), nonce, raw, domain::to_0x_hex(hash)) ==
        db::store_outcome::refused)
      return failed(domain::fenced_error_code, "the attempt's nonce was reclaimed or fenced");
  }
  const auto& rpc = rpc_for(c.chain_id);
  auto result = rebroadcast(rpc, raw, hash, c.poll_seconds);
  if (result.next_state == node_state::submitted)
    result.provider_refs = submit_refs(hash, nonce, sender(), c.chain_id);
  else if (result.error_code == "BROADCAST_REFUSED") {
    // The node refused the bytes: fence the nonce so they can never land
    // later, and only then call the attempt failed.
    try {
      auto fence = fence_nonce(rpc, c.chain_id, nonce);
      auto conn = pool_->acquire();
      if (!fence.empty())
        db::mark_fencing(*conn, s, nonce, domain::to_0x_hex(fence));
      else if (rpc.receipt(hash)) // the refused bytes were mined after all
        result = in_state(node_state::submitted, c.poll_seconds);
      if (result.next_state == node_state::submitted)
        result.provider_refs = submit_refs(hash, nonce, sender(), c.chain_id);
    } catch (const std::exception& ex) {
      log::warn("evm fence failed: recovery decides",
                {{"node_id", ctx.request_node_id}, {"error", ex.what()}});
      result.next_state = node_state::unknown;
    }
  }
  if (c.submit_hold_ms > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(c.submit_hold_ms));
  return result;
}

step_result evm_executor::rebroadcast(const evm_rpc& rpc, const std::string& raw,
                                      const std::string& tx_hash, double poll_seconds) {
  try {
    rpc.send_raw_transaction(raw);
  } catch (const rpc_refused& e) {
    // A second broadcast of the same bytes, or bytes already mined.
    if (!says(e, "already known") && !says(e, "known transaction") &&
        !rpc.transaction_known(tx_hash))
      return failed(says(e, "nonce too low") ? "NONCE_USED" : "BROADCAST_REFUSED", e.what());
  } catch (const domain::executor_error& e) {
    // Not known whether the node took it: recovery finds out.
    auto r = in_state(node_state::unknown, poll_seconds);
    r.error_code = "SUBMIT_ERROR";
    r.error_detail = e.what();
    return r;
  }
  auto r = in_state(node_state::submitted, poll_seconds);
  r.provider_ref_id = domain::to_0x_hex(tx_hash);
  r.provider_refs = tx_hash_refs(tx_hash);
  return r;
}

std::string evm_executor::fence_nonce(const evm_rpc& rpc, std::uint64_t chain_id,
                                      std::uint64_t nonce) {
  const std::string self = *domain::parse_evm_address(sender());
  auto f = current_fees(rpc);
  domain::eip1559_tx tx;
  tx.chain_id = chain_id;
  tx.nonce = nonce;
  tx.max_priority_fee_per_gas = f.priority;
  tx.max_fee_per_gas = f.max_fee;
  tx.gas_limit = native_transfer_gas;
  tx.to = self;
  tx.value = 0;
  domain::sign_request req;
  req.intent.action = "evm_fence";
  req.intent.amount = "0";
  req.intent.destination = sender();
  req.payload_format = evm_signing_data_format;
  req.payload = domain::to_0x_hex(domain::signing_data(tx));
  req.payload_hash = domain::to_0x_hex(domain::signing_hash(tx));
  req.intent.allowed_payload_hash = req.payload_hash;
  auto sig = domain::parse_signature_65(signer_->sign(req).signature);
  const auto raw = domain::signed_raw(tx, *sig);
  try {
    rpc.send_raw_transaction(raw);
  } catch (const rpc_refused& e) {
    if (says(e, "nonce too low"))
      return {};
    throw;
  }
  log::warn("evm nonce fenced with a 0-value self-send",
            {{"chain_id", std::to_string(chain_id)}, {"nonce", std::to_string(nonce)}});
  return domain::transaction_hash(raw);
}

void evm_executor::put_back_if_stuck(const evm_rpc& rpc, const domain::execution_context& ctx,
                                     const std::string& tx_hash, double poll_seconds) {
  // A node may forget a pending transaction (a restart, an eviction), or
  // park it in its future queue and never promote it: ganache does when it
  // arrives while the nonce below is being mined. Either way the same bytes
  // go back: when the node does not know them, or when they are the
  // sender's next nonce and still unmined. A node that holds them answers
  // "already known" (or refuses a same-price replacement), which changes
  // nothing.
  auto conn = pool_->acquire();
  auto attempt = db::find_attempt(*conn, ctx.idempotency_key);
  if (!attempt || attempt->status != "signed")
    return;
  bool stuck = !rpc.transaction_known(tx_hash);
  if (!stuck) {
    const std::string from = *domain::parse_evm_address(attempt->sender.address);
    stuck = rpc.transaction_count(from, "latest").to_u64() == attempt->nonce;
  }
  if (stuck)
    rebroadcast(rpc, attempt->raw, tx_hash, poll_seconds);
}

step_result evm_executor::observe(const domain::execution_context& ctx) {
  domain::evm_node_config c;
  try {
    c = domain::read_evm_config(ctx);
  } catch (const domain::evm_refusal& r) {
    return failed(r.code, r.detail);
  }
  const auto& rpc = rpc_for(c.chain_id);
  const auto hash =
      domain::is_evm_transfer(ctx.action_type) ? refs_tx_hash(ctx.provider_refs) : c.tx_hash;
  if (hash.empty())
    return failed("NO_TX_HASH", "provider_refs.tx_hash is missing");
  auto receipt = rpc.receipt(hash);
  if (!receipt) {
    if (domain::is_evm_transfer(ctx.action_type))
      put_back_if_stuck(rpc, ctx, hash, c.poll_seconds);
    return in_state(node_state::observing, c.poll_seconds);
  }
  if (domain::is_evm_transfer(ctx.action_type)) {
    auto conn = pool_->acquire();
    if (auto attempt = db::find_attempt(*conn, ctx.idempotency_key);
        attempt && attempt->status == "signed")
      db::mark_consumed(*conn, attempt->sender, attempt->nonce);
  }
  if (!receipt->success)
    return failed("REVERTED", revert_reason(rpc, hash, receipt->block_number));
  const auto head = rpc.block_number();
  const auto confirmations = head >= receipt->block_number ? head - receipt->block_number + 1 : 0;
  auto r =
      in_state(confirmations >= static_cast<std::uint64_t>(c.confirmations) ? node_state::completed
                                                                            : node_state::observing,
               c.poll_seconds);
  r.provider_refs = json::writer()
                        .begin_object()
                        .member("block_number", receipt->block_number)
                        .member("confirmations", confirmations)
                        .member("gas_used", receipt->gas_used.to_decimal())
                        .end_object()
                        .str();
  return r;
}

domain::recover_result evm_executor::recover(const domain::execution_context& ctx) {
  domain::recover_result out;
  domain::evm_node_config c;
  try {
    c = domain::read_evm_config(ctx);
  } catch (const domain::evm_refusal& r) {
    out.outcome = domain::recover_outcome::found;
    out.result = failed(r.code, r.detail);
    return out;
  }
  const auto& rpc = rpc_for(c.chain_id);
  if (!domain::is_evm_transfer(ctx.action_type)) {
    // Read-only: nothing was sent, observation simply goes on.
    out.outcome = domain::recover_outcome::found;
    out.result = in_state(node_state::submitted, c.poll_seconds);
    out.result.provider_refs = tx_hash_refs(c.tx_hash);
    return out;
  }
  auto conn = pool_->acquire();
  auto attempt = db::find_attempt(*conn, ctx.idempotency_key);
  if (attempt && attempt->status == "signed") {
    const auto hash = bytes_of_hash(attempt->tx_hash);
    auto found = [&](step_result r) {
      out.outcome = domain::recover_outcome::found;
      if (r.provider_refs.empty() || r.provider_refs == "{}" ||
          r.next_state == node_state::submitted)
        r.provider_refs = submit_refs(hash, attempt->nonce, attempt->sender.address, c.chain_id);
      out.result = std::move(r);
      return out;
    };
    if (auto receipt = rpc.receipt(hash)) {
      db::mark_consumed(*conn, attempt->sender, attempt->nonce);
      if (!receipt->success)
        return found(failed("REVERTED", revert_reason(rpc, hash, receipt->block_number)));
      return found(in_state(node_state::submitted, c.poll_seconds));
    }
    if (rpc.transaction_known(hash))
      return found(in_state(node_state::submitted, c.poll_seconds));
    auto again = rebroadcast(rpc, attempt->raw, hash, c.poll_seconds);
    if (again.next_state == node_state::submitted)
      return found(again);
    if (again.error_code == "NONCE_USED" && !rpc.receipt(hash)) {
      // Another transaction (a fence) took the nonce: these bytes can
      // never be mined now.
      db::mark_consumed(*conn, attempt->sender, attempt->nonce);
      return found(failed("NONCE_USED", "the attempt's nonce was used by another transaction"));
    }
    return out; // still unknown: try again later
  }
  bool had_bytes = false;
  auto reservation = db::fence_attempt(*conn, owner_of(ctx), had_bytes);
  if (had_bytes)
    return out; // bytes were stored meanwhile: the next pass looks them up
  if (reservation) {
    try {
      auto fence = fence_nonce(rpc, c.chain_id, reservation->nonce);
      if (fence.empty())
        db::mark_consumed(*conn, reservation->sender, reservation->nonce);
      else
        db::mark_fencing(*conn, reservation->sender, reservation->nonce, domain::to_0x_hex(fence));
    } catch (const std::exception& ex) {
      log::warn("evm fence not sent yet", {{"node_id", ctx.request_node_id}, {"error", ex.what()}});
      return out;
    }
  }
  out.outcome = domain::recover_outcome::fenced;
  return out;
}

domain::health_result evm_executor::health() {
  domain::health_result h;
  h.signer_address = sender();
  for (const auto& [chain, rpc] : rpcs_) {
    try {
      if (auto answered = rpc.chain_id(); answered != chain) {
        h.up = false;
        h.detail += "chain " + std::to_string(chain) + " endpoint answers chain " +
                    std::to_string(answered) + "; ";
      }
    } catch (const std::exception& ex) {
      h.up = false;
      h.detail += "chain " + std::to_string(chain) + ": " + ex.what() + "; ";
    }
  }
  return h;
}

} // namespace mg::executors
