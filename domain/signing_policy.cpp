#include "domain/signing_policy.hpp"

#include <cctype>

#include "domain/evm_transfer_plan.hpp"
#include "domain/evm_tx.hpp"
#include "domain/evm_tx_decode.hpp"
#include "domain/hash.hpp"
#include "domain/json.hpp"
#include "domain/keccak.hpp"

namespace mg::domain {

namespace {

signing_verdict refuse(std::string detail) {
  signing_verdict v;
  v.detail = std::move(detail);
  return v;
}

/// Lower-case hex without 0x: how two spellings of one hash compare.
std::string normalised_hash(std::string_view h) {
  if (h.size() >= 2 && h[0] == '0' && (h[1] == 'x' || h[1] == 'X'))
    h.remove_prefix(2);
  std::string out(h);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// The verdict for a payload whose hash the engine computed as `computed_hex`.
signing_verdict allow_if_hash_matches(const prepared_action& a, const std::string& computed_hex) {
  if (normalised_hash(a.payload_hash) != computed_hex)
    return refuse("payload_hash: the payload does not hash to the prepared payload_hash");
  signing_verdict v;
  v.allowed = true;
  v.allowed_payload_hash = a.payload_hash;
  return v;
}

/// A wei amount in a JSON object: a decimal string or an unsigned integer.
std::optional<uint256> wei_member(const json::value& o, const char* key, bool& invalid) {
  if (!o.IsObject() || !o.HasMember(key))
    return std::nullopt;
  const auto& v = o[key];
  if (v.IsUint64())
    return uint256(v.GetUint64());
  if (v.IsString())
    if (auto parsed = uint256::from_decimal(v.GetString()))
      return parsed;
  invalid = true;
  return std::nullopt;
}

/// config.max_fee_wei, else risk_controls.max_fee_wei; an error text when
/// neither is a valid cap.
std::optional<uint256> fee_cap(const execution_context& ctx, std::string& problem) {
  bool invalid = false;
  auto config = json::parse(ctx.node_config);
  if (config)
    if (auto cap = wei_member(*config, "max_fee_wei", invalid))
      return cap;
  if (invalid) {
    problem = "fee: config.max_fee_wei is not a wei amount";
    return std::nullopt;
  }
  auto risk = json::parse(ctx.risk_controls);
  if (risk)
    if (auto cap = wei_member(*risk, "max_fee_wei", invalid))
      return cap;
  problem = invalid ? "fee: risk_controls.max_fee_wei is not a wei amount"
                    : "fee: no cap (config.max_fee_wei or risk_controls.max_fee_wei)";
  return std::nullopt;
}

signing_verdict check_evm_transfer(const execution_context& ctx, const prepared_action& a,
                                   const std::optional<nonce_reservation>& reservation) {
  if (a.payload_format != evm_signing_data_payload)
    return refuse("payload_format: an EVM transfer is signed only as evm_signing_data, not '" +
                  a.payload_format + "'");
  auto bytes = parse_0x_hex(a.payload);
  auto tx = bytes ? decode_evm_signing_data(*bytes) : std::nullopt;
  if (!tx)
    return refuse("payload: not the signing data of an EIP-155 or EIP-1559 transaction");
  evm_node_config config;
  evm_transfer_plan plan;
  try {
    config = read_evm_config(ctx);
    plan = plan_evm_transfer(ctx, config);
  } catch (const evm_refusal& r) {
    return refuse(r.code + ": " + r.detail);
  }
  const bool native = ctx.action_type == evm_native_transfer;
  if (tx->chain_id != config.chain_id)
    return refuse("chain_id: the transaction is for chain " + std::to_string(tx->chain_id) +
                  ", the node's config says " + std::to_string(config.chain_id));
  if (tx->to != plan.to)
    return refuse(native ? "recipient: the transaction does not pay intent.destination"
                         : "token: the transaction does not call config.token");
  if (tx->value != plan.value)
    return refuse("value: the transaction moves " + tx->value.to_decimal() + " wei, the intent " +
                  plan.value.to_decimal());
  if (tx->data != plan.data)
    return refuse(native ? "calldata: a native transfer carries no calldata"
                         : "calldata: not transfer(intent.destination, intent.amount)");
  if (!tx->access_list.empty())
    return refuse("access_list: must be empty");
  std::string problem;
  auto cap = fee_cap(ctx, problem);
  if (!cap)
    return refuse(problem);
  auto fee = max_fee_wei(*tx);
  if (!fee || *fee > *cap)
    return refuse("fee: gas limit x max fee per gas " + (fee ? fee->to_decimal() : "overflows") +
                  " wei, the cap is " + cap->to_decimal());
  if (!reservation || reservation->chain_id != tx->chain_id ||
      tx->nonce != uint256(reservation->nonce))
    return refuse("nonce: the transaction's nonce " + tx->nonce.to_decimal() +
                  (reservation
                       ? " is not the attempt's reservation " + std::to_string(reservation->nonce)
                       : " is not reserved for this attempt"));
  return allow_if_hash_matches(a, normalised_hash(to_0x_hex(keccak256(*bytes))));
}

} // namespace

signing_verdict check_signing_policy(const execution_context& ctx, const prepared_action& a,
                                     const std::optional<nonce_reservation>& reservation) {
  if (is_evm_transfer(ctx.action_type))
    return check_evm_transfer(ctx, a, reservation);
  if (a.payload_format == evm_signing_data_payload)
    return refuse("payload_format: evm_signing_data is signed only for " +
                  std::string(evm_native_transfer) + " and " + evm_token_transfer + " nodes");
  if (a.payload_format == evm_signing_hash_payload)
    return refuse("payload_format: a bare hash is never signed");
  return allow_if_hash_matches(a, sha256_hex(a.payload));
}

sign_request build_sign_request(const execution_context& ctx, const prepared_action& a,
                                const std::string& allowed_payload_hash) {
  auto intent = json::parse(ctx.intent);
  auto params = json::parse(ctx.input_params);
  sign_request r;
  r.request_id = ctx.request_id;
  r.request_node_id = ctx.request_node_id;
  r.intent.action = a.action_type;
  if (intent && intent->IsObject()) {
    r.intent.asset = json::get_string(*intent, "asset");
    r.intent.amount = json::get_string(*intent, "amount");
    r.intent.destination = json::get_string(*intent, "destination");
  }
  if (params && params->IsObject())
    r.intent.chain_family = json::get_string(*params, "chain_family", "evm");
  r.intent.max_fee_usd = std::nullopt;
  r.intent.allowed_payload_hash = allowed_payload_hash;
  r.payload_format = a.payload_format;
  r.payload = a.payload;
  r.payload_hash = a.payload_hash;
  r.metadata = ctx.input_params;
  return r;
}

} // namespace mg::domain
