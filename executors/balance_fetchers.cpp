#include "executors/balance_fetchers.hpp"

namespace mg::executors {

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
