#pragma once
// The balance fetcher port (reference §7 balance_fetcher_registry): each
// fetcher reads the balances of one venue. The balance_snapshot worker and
// GET /v3/balances?fresh=true iterate the same registry; the venues'
// implementations live in executors/.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace mg::domain {

/// One balance a venue reports.
struct balance_amount {
  std::string asset;
  std::string amount; // decimal string
};

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
  virtual std::vector<balance_amount> fetch() = 0;
};

using balance_fetcher_registry = std::vector<std::shared_ptr<balance_fetcher>>;

} // namespace mg::domain
