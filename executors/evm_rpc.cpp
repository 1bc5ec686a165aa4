#include "executors/evm_rpc.hpp"

#include <atomic>

#include "domain/evm_tx.hpp"
#include "domain/json.hpp"
#include "domain/json_writer.hpp"

namespace mg::executors {

namespace {

std::atomic<std::uint64_t> next_id{1};

domain::uint256 quantity(const std::string& result_json, const char* what) {
  auto doc = json::parse(result_json);
  if (!doc || !doc->IsString())
    throw domain::executor_error(std::string(what) + ": not a quantity");
  auto v = domain::uint256::from_hex(doc->GetString());
  if (!v)
    throw domain::executor_error(std::string(what) + ": not a quantity");
  return *v;
}

std::uint64_t small_quantity(const std::string& result_json, const char* what) {
  auto v = quantity(result_json, what).to_u64();
  if (!v)
    throw domain::executor_error(std::string(what) + ": out of range");
  return *v;
}

std::string bytes_of(const json::value& v, const char* what) {
  if (!v.IsString())
    throw domain::executor_error(std::string(what) + ": not hex data");
  auto b = domain::parse_0x_hex(v.GetString());
  if (!b)
    throw domain::executor_error(std::string(what) + ": not hex data");
  return *b;
}

std::string bytes_result(const std::string& result_json, const char* what) {
  auto doc = json::parse(result_json);
  if (!doc)
    throw domain::executor_error(std::string(what) + ": not hex data");
  return bytes_of(*doc, what);
}

/// Params [call object] or, with a block tag, [call object, block].
std::string call_params(const evm_transaction_call& tx, const std::string* block = nullptr) {
  json::writer w;
  w.begin_array().begin_object().member("from", domain::to_0x_hex(tx.from));
  if (!tx.to.empty())
    w.member("to", domain::to_0x_hex(tx.to));
  w.member("value", tx.value.to_hex()).member("data", domain::to_0x_hex(tx.data));
  if (tx.gas)
    w.member("gas", tx.gas->to_hex());
  w.end_object();
  if (block)
    w.string(*block);
  return w.end_array().str();
}

/// Params [0x-hex of `bytes`] or, with a block tag, [0x-hex, block].
std::string hex_params(const std::string& bytes, const char* block = nullptr) {
  json::writer w;
  w.begin_array().string(domain::to_0x_hex(bytes));
  if (block)
    w.string(block);
  return w.end_array().str();
}

} // namespace

evm_rpc::evm_rpc(const std::string& url, double timeout_seconds) : http_(url, timeout_seconds) {}

std::map<std::uint64_t, evm_rpc> evm_rpc_clients(const std::map<std::uint64_t, std::string>& urls,
                                                 double timeout_seconds) {
  std::map<std::uint64_t, evm_rpc> out;
  for (const auto& [chain, url] : urls)
    out.emplace(chain, evm_rpc(url, timeout_seconds));
  return out;
}

std::string evm_rpc::call(const std::string& method, const std::string& params_json) const {
  const auto id = next_id.fetch_add(1);
  const std::string body = json::writer()
                               .begin_object()
                               .member("jsonrpc", "2.0")
                               .member("id", id)
                               .member("method", method)
                               .key("params")
                               .raw(params_json)
                               .end_object()
                               .str();
  http_reply reply;
  try {
    reply = http_.post("", body);
  } catch (const domain::executor_error& e) {
    throw domain::executor_error(method + ": " + e.what());
  }
  auto doc = json::parse(reply.body);
  if (!doc || !doc->IsObject())
    throw domain::executor_error(method + ": HTTP " + std::to_string(reply.status) +
                                 " without a JSON-RPC reply");
  if (doc->HasMember("error")) {
    const auto& e = (*doc)["error"];
    int code = e.IsObject() && e.HasMember("code") && e["code"].IsInt() ? e["code"].GetInt() : 0;
    std::string message = e.IsObject() ? json::get_string(e, "message") : "";
    std::string data = e.IsObject() && e.HasMember("data") ? json::dump(e["data"]) : "";
    throw rpc_refused(code, method + ": " + message, data);
  }
  if (!doc->HasMember("result"))
    throw domain::executor_error(method + ": reply has neither result nor error");
  return json::dump((*doc)["result"]);
}

std::uint64_t evm_rpc::chain_id() const {
  return small_quantity(call("eth_chainId", "[]"), "eth_chainId");
}

std::uint64_t evm_rpc::block_number() const {
  return small_quantity(call("eth_blockNumber", "[]"), "eth_blockNumber");
}

domain::uint256 evm_rpc::balance(const std::string& address) const {
  return quantity(call("eth_getBalance", hex_params(address, "latest")), "eth_getBalance");
}

domain::uint256 evm_rpc::transaction_count(const std::string& address, const char* block) const {
  return quantity(call("eth_getTransactionCount", hex_params(address, block)),
                  "eth_getTransactionCount");
}

domain::uint256 evm_rpc::base_fee() const {
  auto doc = json::parse(call("eth_getBlockByNumber", "[\"latest\",false]"));
  if (!doc || !doc->IsObject())
    throw domain::executor_error("eth_getBlockByNumber: no block");
  auto fee = json::get_string(*doc, "baseFeePerGas");
  if (fee.empty())
    return {};
  auto v = domain::uint256::from_hex(fee);
  if (!v)
    throw domain::executor_error("eth_getBlockByNumber: bad baseFeePerGas");
  return *v;
}

domain::uint256 evm_rpc::max_priority_fee() const {
  return quantity(call("eth_maxPriorityFeePerGas", "[]"), "eth_maxPriorityFeePerGas");
}

domain::uint256 evm_rpc::estimate_gas(const evm_transaction_call& tx) const {
  return quantity(call("eth_estimateGas", call_params(tx)), "eth_estimateGas");
}

std::string evm_rpc::eth_call(const evm_transaction_call& tx, const std::string& block) const {
  return bytes_result(call("eth_call", call_params(tx, &block)), "eth_call");
}

std::string evm_rpc::send_raw_transaction(const std::string& raw) const {
  return bytes_result(call("eth_sendRawTransaction", hex_params(raw)), "eth_sendRawTransaction");
}

std::optional<evm_receipt> evm_rpc::receipt(const std::string& tx_hash) const {
  auto doc = json::parse(call("eth_getTransactionReceipt", hex_params(tx_hash)));
  if (!doc || doc->IsNull())
    return std::nullopt;
  if (!doc->IsObject())
    throw domain::executor_error("eth_getTransactionReceipt: not an object");
  // A receipt without a block is not mined yet (some nodes answer so).
  auto block = json::get_string(*doc, "blockNumber");
  if (block.empty())
    return std::nullopt;
  evm_receipt r;
  r.success = json::get_string(*doc, "status") == "0x1";
  r.block_number = small_quantity(json::quote(block), "receipt.blockNumber");
  r.gas_used = quantity(json::quote(json::get_string(*doc, "gasUsed")), "receipt.gasUsed");
  auto price = json::get_string(*doc, "effectiveGasPrice");
  if (!price.empty())
    r.effective_gas_price = quantity(json::quote(price), "receipt.effectiveGasPrice");
  return r;
}

bool evm_rpc::transaction_known(const std::string& tx_hash) const {
  auto doc = json::parse(call("eth_getTransactionByHash", hex_params(tx_hash)));
  return doc && doc->IsObject();
}

std::string evm_rpc::code(const std::string& address) const {
  return bytes_result(call("eth_getCode", hex_params(address, "latest")), "eth_getCode");
}

} // namespace mg::executors
