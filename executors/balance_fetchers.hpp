#pragma once
// The venues behind the balance fetcher port (domain/balance_fetcher.hpp).
// The default fetcher, `gateway`, reads the unified USDC balance from the
// gateway API at MG_GATEWAY_API_URL (reply format and parser:
// domain/venue_replies.hpp).
#include <string>

#include "config/settings.hpp"
#include "domain/balance_fetcher.hpp"
#include "domain/venue_replies.hpp"
#include "executors/json_http_client.hpp"

namespace mg::executors {

using domain::balance_amount;
using domain::balance_fetch_error;
using domain::balance_fetcher;
using domain::balance_fetcher_registry;

/// The gateway API's path for the unified balance.
inline constexpr const char* gateway_balances_path = "/v1/balances/unified";
/// Connect, read and write timeout of one gateway call.
inline constexpr double gateway_timeout_seconds = 10;

class gateway_balance_fetcher : public balance_fetcher {
public:
  /// Throws std::invalid_argument when `base_url` is not http(s).
  /// `venue_key` names the rows (another gateway-protocol venue may be
  /// registered under its own key).
  gateway_balance_fetcher(const std::string& base_url, double timeout_seconds,
                          std::string venue_key = "gateway");
  const std::string& venue_key() const override { return venue_key_; }
  std::vector<balance_amount> fetch() override;

private:
  std::string venue_key_;
  json_http_client client_;
};

using domain::parse_gateway_balance;

/// The configured fetchers: `gateway` when MG_GATEWAY_API_URL is set (empty
/// registry otherwise). Throws std::invalid_argument for a URL that is not
/// http(s).
balance_fetcher_registry make_balance_fetchers(const config::settings& s);

} // namespace mg::executors
