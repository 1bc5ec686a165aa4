#pragma once
// GET /v3/balances[?fresh=true] (SPEC §5, scope read): the latest snapshot
// per venue and asset with a `stale` flag computed at read time
// (MG_BALANCE_STALE_THRESHOLD_SECONDS). fresh=true first fetches through
// the same balance fetcher registry as the balance_snapshot worker and
// appends to the same balance_snapshots table, then answers; a venue whose
// fetch failed is listed in `errors` next to the stored data, and only when
// there is nothing at all to answer is it 503. Never a 500 for a peer's
// failure.
#include <map>
#include <string>

#include "domain/balance_fetcher.hpp"
#include "services/service_context.hpp"

namespace mg::services {

class balance_service {
public:
  /// `config_problem`: why a configured venue has no fetcher (fresh=true
  /// then answers 503 with it); "" when the registry is what was asked for.
  balance_service(service_context& ctx, domain::balance_fetcher_registry fetchers,
                  std::string config_problem = {});

  /// `query`: only `fresh` (true|false, at most once); anything else → 400.
  reply get(const caller& who, const std::multimap<std::string, std::string>& query);

private:
  service_context& ctx_;
  domain::balance_fetcher_registry fetchers_;
  std::string config_problem_; // why there are no fetchers when one was configured
};

} // namespace mg::services
