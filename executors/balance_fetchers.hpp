#pragma once
// Balance fetchers (reference §7 balance_fetcher_registry): each reads the
// balances of one venue. balance_snapshot (worker) and
// GET /v3/balances?fresh=true (API) iterate the same registry and append
// what they read to balance_snapshots.
//
// The default fetcher, `gateway`, reads the unified USDC balance from the
// gateway API at MG_GATEWAY_API_URL:
//   GET {MG_GATEWAY_API_URL}/v1/balances/unified
//   200 {"asset": "USDC", "amount": "1234.500000"}
// `amount` is a decimal string (digits, optional .fraction, no sign, no
// exponent, at most 78 digits; a JSON number is refused so no float ever
// touches it); other members are ignored. Any other status, a body that is
// not such an object, or a transport failure is a failed fetch.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/settings.hpp"
#include "executors/json_http_client.hpp"
#include "persistence/balance_store.hpp"

namespace mg::executors {

/// A venue answered, but not with balances we can trust.
struct balance_fetch_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class balance_fetcher {
public:
  virtual ~balance_fetcher() = default;
  /// balance_snapshots.venue_key of every row this fetcher produces.
  virtual const std::string& venue_key() const = 0;
  /// Every balance the venue reports now. Throws domain::executor_error
  /// (transport) or balance_fetch_error (bad answer); never a partial list.
  virtual std::vector<db::balance_amount> fetch() = 0;
};

using balance_fetcher_registry = std::vector<std::shared_ptr<balance_fetcher>>;

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
  std::vector<db::balance_amount> fetch() override;

private:
  std::string venue_key_;
  json_http_client client_;
};

/// Parses a gateway reply body (see above); throws balance_fetch_error.
db::balance_amount parse_gateway_balance(const std::string& body);

/// The configured fetchers: `gateway` when MG_GATEWAY_API_URL is set (empty
/// registry otherwise). Throws std::invalid_argument for a URL that is not
/// http(s).
balance_fetcher_registry make_balance_fetchers(const config::settings& s);

} // namespace mg::executors
