#include "domain/evm_transfer_plan.hpp"

#include "domain/evm_amount.hpp"
#include "domain/evm_tx.hpp"
#include "domain/json.hpp"

namespace mg::domain {

namespace {

std::optional<std::uint64_t> unsigned_member(const json::value& o, const char* key) {
  if (!o.HasMember(key))
    return std::nullopt;
  const auto& v = o[key];
  if (v.IsUint64())
    return v.GetUint64();
  if (v.IsString()) {
    auto parsed = uint256::from_decimal(v.GetString());
    if (auto small = parsed ? parsed->to_u64() : std::nullopt)
      return small;
  }
  throw evm_refusal{"CONFIG_INVALID", std::string("config.") + key + " must be an integer"};
}

} // namespace

bool is_evm_transfer(const std::string& action_type) {
  return action_type == evm_native_transfer || action_type == evm_token_transfer;
}

evm_node_config read_evm_config(const execution_context& ctx) {
  auto doc = json::parse(ctx.node_config);
  if (!doc || !doc->IsObject())
    throw evm_refusal{"CONFIG_INVALID", "config must be an object"};
  evm_node_config c;
  auto chain = unsigned_member(*doc, "chain_id");
  if (!chain || *chain == 0)
    throw evm_refusal{"CONFIG_INVALID", "config.chain_id is required"};
  c.chain_id = *chain;
  if (auto n = unsigned_member(*doc, "confirmations")) {
    if (*n > 1000)
      throw evm_refusal{"CONFIG_INVALID", "config.confirmations must be at most 1000"};
    c.confirmations = static_cast<int>(*n);
  }
  if (auto d = unsigned_member(*doc, "decimals")) {
    if (*d > static_cast<std::uint64_t>(max_token_decimals))
      throw evm_refusal{"CONFIG_INVALID", "config.decimals is out of range"};
    c.decimals = static_cast<int>(*d);
  } else if (ctx.action_type == evm_token_transfer) {
    throw evm_refusal{"CONFIG_INVALID", "config.decimals is required for ERC-20"};
  }
  if (auto g = unsigned_member(*doc, "gas_limit"))
    c.gas_limit = uint256(*g);
  if (doc->HasMember("poll_seconds")) {
    const auto& p = (*doc)["poll_seconds"];
    if (!p.IsNumber() || !(p.GetDouble() > 0) || p.GetDouble() > 600)
      throw evm_refusal{"CONFIG_INVALID", "config.poll_seconds must be in (0, 600]"};
    c.poll_seconds = p.GetDouble();
  }
  if (auto h = unsigned_member(*doc, "submit_hold_ms"))
    c.submit_hold_ms = static_cast<int>(std::min<std::uint64_t>(*h, 600000));
  if (ctx.action_type == evm_token_transfer) {
    auto token = parse_evm_address(json::get_string(*doc, "token"));
    if (!token)
      throw evm_refusal{"CONFIG_INVALID", "config.token must be the ERC-20 contract address"};
    c.token = *token;
  }
  if (ctx.action_type == evm_finality_observe) {
    auto hash = parse_0x_hex(json::get_string(*doc, "tx_hash"));
    if (!hash || hash->size() != 32)
      throw evm_refusal{"CONFIG_INVALID", "config.tx_hash must be a 32-byte hash"};
    c.tx_hash = *hash;
  }
  return c;
}

evm_transfer_plan plan_evm_transfer(const execution_context& ctx, const evm_node_config& c) {
  auto intent = json::parse(ctx.intent);
  if (!intent || !intent->IsObject())
    throw evm_refusal{"INTENT_INVALID", "intent must be an object"};
  const std::string destination = json::get_string(*intent, "destination");
  if (classify_evm_address(destination) != address_case::checksummed)
    throw evm_refusal{"INVALID_DESTINATION",
                      "intent.destination must be an EIP-55 checksummed address"};
  auto units = to_base_units(json::get_string(*intent, "amount"), c.decimals);
  if (!units.value)
    throw evm_refusal{"INVALID_AMOUNT", "intent.amount: " + units.error};
  if (units.value->is_zero())
    throw evm_refusal{"INVALID_AMOUNT", "intent.amount must be greater than 0"};
  auto recipient = *parse_evm_address(destination);
  if (ctx.action_type == evm_native_transfer)
    return {recipient, *units.value, {}, *units.value};
  return {c.token, uint256(0), erc20_transfer_calldata(recipient, *units.value), *units.value};
}

} // namespace mg::domain
