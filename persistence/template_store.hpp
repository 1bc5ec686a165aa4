#pragma once
// Template versions: stored once, immutable, cached compiled in memory.
#include <map>
#include <memory>
#include <mutex>
#include <pqxx/pqxx>
#include <string>
#include <utility>
#include <vector>

#include "domain/plan.hpp"

namespace mg::db {

enum class save_outcome { inserted, unchanged, conflict, invalid };

struct save_result {
  save_outcome outcome = save_outcome::invalid;
  std::vector<domain::compile_error> errors;
  std::string template_key;
  int version = 0;
};

/// Compiles and stores a template version. The same plan again is a no-op;
/// a different plan under an existing version is refused (conflict).
save_result save_template(pqxx::transaction_base& tx, const std::string& plan_json);

/// A compiled plan with the graph_hash recomputed from what is stored.
struct stored_plan {
  domain::plan plan;
  std::string graph_hash;
};

/// Latest version of `key`, or 0 when there is none.
int latest_template_version(pqxx::transaction_base& tx, const std::string& key);

/// Compiled plans by (key, version). Versions are immutable, so entries are
/// kept; thread-safe, shared by every worker of a process.
class plan_cache {
public:
  /// Loads (and compiles) on a miss; throws std::runtime_error when the
  /// template does not exist or no longer compiles.
  std::shared_ptr<const stored_plan> get(pqxx::transaction_base& tx, const std::string& key,
                                         int version);

private:
  std::mutex mutex_;
  std::map<std::pair<std::string, int>, std::shared_ptr<const stored_plan>> plans_;
};

/// `risk_controls.max_amount` of a template version as text ("" when the
/// version has none); nullopt when the version does not exist.
std::optional<std::string> template_max_amount(pqxx::transaction_base& tx,
                                               const std::string& template_key, int version);
/// `risk_controls.asset` of a template version: the asset its movements
/// move ("" when the template names none, or there is no such version).
std::string template_asset(pqxx::transaction_base& tx, const std::string& template_key,
                           int version);

} // namespace mg::db
