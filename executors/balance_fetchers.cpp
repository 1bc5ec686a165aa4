#include "executors/balance_fetchers.hpp"

#include "domain/json.hpp"
#include "domain/movement_requests.hpp"

namespace mg::executors {

balance_amount parse_gateway_balance(const std::string& body) {
  std::string error;
  auto doc = json::parse(body, &error);
  if (!doc)
    throw balance_fetch_error("reply is not JSON (" + error + ")");
  if (!doc->IsObject())
    throw balance_fetch_error("reply is not a JSON object");
  auto member = [&](const char* name) -> const json::value& {
    auto it = doc->FindMember(name);
    if (it == doc->MemberEnd())
      throw balance_fetch_error(std::string("reply has no '") + name + "'");
    if (!it->value.IsString())
      throw balance_fetch_error(std::string("'") + name + "' is not a string");
    return it->value;
  };
  std::string asset = member("asset").GetString();
  std::string amount = member("amount").GetString();
  // The gateway's unified balance is USDC by contract; anything else means
  // we are talking to something we do not understand.
  if (asset != "USDC")
    throw balance_fetch_error("asset is '" + asset.substr(0, 32) + "', expected 'USDC'");
  if (!domain::is_decimal(amount))
    throw balance_fetch_error("amount is not a decimal string");
  return {asset, amount};
}

gateway_balance_fetcher::gateway_balance_fetcher(const std::string& base_url,
                                                 double timeout_seconds, std::string venue_key)
    : venue_key_(std::move(venue_key)), client_(base_url, timeout_seconds) {}

std::vector<balance_amount> gateway_balance_fetcher::fetch() {
  auto reply = client_.get(gateway_balances_path, {{"Accept", "application/json"}});
  if (reply.status != 200)
    throw balance_fetch_error("HTTP " + std::to_string(reply.status));
  return {parse_gateway_balance(reply.body)};
}

balance_fetcher_registry make_balance_fetchers(const config::settings& s) {
  balance_fetcher_registry out;
  if (!s.gateway_api_url.empty())
    out.push_back(
        std::make_shared<gateway_balance_fetcher>(s.gateway_api_url, gateway_timeout_seconds));
  return out;
}

} // namespace mg::executors
