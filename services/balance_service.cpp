#include "services/balance_service.hpp"

#include <optional>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <set>
#include <variant>
#include <vector>

#include "persistence/balance_store.hpp"
#include "services/balance_fetch.hpp"

namespace mg::services {

using namespace api;

namespace {

using writer = rapidjson::Writer<rapidjson::StringBuffer>;

void string_field(writer& w, const char* name, const std::string& value) {
  w.Key(name);
  w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
}

struct venue_error {
  std::optional<std::string> venue_key; // nullopt: not about one venue
  std::string message;
};

/// `?fresh=true|false`; any other parameter, value or repetition is refused.
std::variant<bool, reply> fresh_param(const std::multimap<std::string, std::string>& query) {
  std::optional<bool> fresh;
  for (auto& [key, value] : query) {
    if (key != "fresh")
      return error_reply(
          bad_request("unknown query parameter", {{key, "not a parameter of this call"}}));
    if (fresh)
      return error_reply(bad_request("query parameter given twice", {{key, "repeated"}}));
    if (value != "true" && value != "false")
      return error_reply(bad_request("invalid query parameter", {{key, "must be true or false"}}));
    fresh = value == "true";
  }
  return fresh.value_or(false);
}

std::string balances_body(const std::vector<db::latest_balance>& rows, double threshold,
                          const std::vector<venue_error>& errors) {
  rapidjson::StringBuffer buf;
  writer w(buf);
  w.StartObject();
  w.Key("items");
  w.StartArray();
  for (auto& r : rows) {
    w.StartObject();
    string_field(w, "venue_key", r.venue_key);
    string_field(w, "asset", r.asset);
    string_field(w, "amount", r.amount);
    string_field(w, "fetched_at", r.fetched_at);
    w.Key("stale");
    w.Bool(r.stale);
    w.EndObject();
  }
  w.EndArray();
  w.Key("stale_threshold_seconds");
  w.Double(threshold);
  w.Key("errors");
  w.StartArray();
  for (auto& e : errors) {
    w.StartObject();
    w.Key("venue_key");
    if (e.venue_key)
      w.String(e.venue_key->c_str(), static_cast<rapidjson::SizeType>(e.venue_key->size()));
    else
      w.Null();
    string_field(w, "message", e.message);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return buf.GetString();
}

/// 503 naming every failure: nothing stored and nothing fetched.
reply nothing_to_answer(const std::vector<venue_error>& errors) {
  auto e = unavailable("no balance could be fetched and none is stored");
  for (auto& v : errors)
    e.details.push_back({v.venue_key.value_or(""), v.message});
  return error_reply(e);
}

} // namespace

balance_service::balance_service(service_context& ctx, domain::balance_fetcher_registry fetchers,
                                 std::string config_problem)
    : ctx_(ctx), fetchers_(std::move(fetchers)), config_problem_(std::move(config_problem)) {}

reply balance_service::get(const caller&, const std::multimap<std::string, std::string>& query) {
  auto fresh = fresh_param(query);
  if (auto* refused = std::get_if<reply>(&fresh))
    return *refused;
  const double threshold = ctx_.settings.balance_stale_threshold_seconds;
  if (!std::get<bool>(fresh)) {
    return with_read_transaction(ctx_, [&](pqxx::transaction_base& tx) {
      auto rows = db::latest_balances(tx, threshold);
      tx.commit();
      return reply{200, balances_body(rows, threshold, {}), {}};
    });
  }
  // The venues are asked before a connection is borrowed: a slow venue
  // never holds one of the pool's connections.
  std::vector<venue_error> errors;
  if (fetchers_.empty())
    errors.push_back({std::nullopt, config_problem_.empty()
                                        ? "no balance fetcher is configured (MG_GATEWAY_API_URL)"
                                        : config_problem_});
  auto fetches = services::fetch_all_balances(fetchers_);
  return with_transaction(ctx_, [&](pqxx::transaction_base& tx) {
    services::store_balance_fetches(tx, fetches);
    auto rows = db::latest_balances(tx, threshold);
    tx.commit();
    for (auto& v : fetches)
      if (!v.error.empty())
        errors.push_back({v.venue_key, v.error});
    if (rows.empty() && !errors.empty())
      return nothing_to_answer(errors);
    return reply{200, balances_body(rows, threshold, errors), {}};
  });
}

} // namespace mg::services
