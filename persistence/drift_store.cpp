#include "persistence/drift_store.hpp"

#include <algorithm>
#include <tuple>

#include "domain/drift.hpp"
#include "domain/json_writer.hpp"
#include "persistence/db.hpp"
#include "persistence/notification_store.hpp"

namespace mg::db {

namespace {

using domain::drift_change;

/// The notification of one edge of one episode: the key makes it one row
/// however often (and by however many processes) the edge is recorded.
void notify_edge(pqxx::transaction_base& tx, drift_change change, const std::string& key_base,
                 const std::string& subject, int episode, const std::string& payload_json) {
  if (change == drift_change::none)
    return;
  std::string kind =
      change == drift_change::detected ? "registry_drift" : "registry_drift_resolved";
  enqueue_notification(
      tx, {kind, subject, kind + ":" + key_base + ":" + std::to_string(episode), payload_json});
}

void count(drift_record_counts& c, drift_change change) {
  ++c.checked;
  if (change == drift_change::detected)
    ++c.detected;
  else if (change == drift_change::resolved)
    ++c.resolved;
}

} // namespace

std::vector<registry_baseline> load_baselines(pqxx::connection& conn) {
  static const statement q{"mg_load_baselines",
                           "SELECT id, chain_id, address, expected_code_hash, label"
                           " FROM registry_baselines ORDER BY chain_id, id"};
  pqxx::work tx(conn);
  auto rows = exec(tx, q);
  tx.commit();
  std::vector<registry_baseline> out;
  for (const auto& r : rows)
    out.push_back(
        {r[0].as<long long>(), r[1].as<std::uint64_t>(), r[2].c_str(), r[3].c_str(), r[4].c_str()});
  return out;
}

bool upsert_baseline(pqxx::transaction_base& tx, const registry_baseline& b) {
  // A new expectation starts a new verification: the old verdict (and any
  // open episode) was about another hash.
  static const statement q{
      "mg_upsert_baseline",
      "INSERT INTO registry_baselines AS b (chain_id, address, expected_code_hash, label)"
      " VALUES ($1, $2, $3, $4)"
      " ON CONFLICT (chain_id, address) DO UPDATE SET"
      "   expected_code_hash = EXCLUDED.expected_code_hash, label = EXCLUDED.label,"
      "   updated_at = now(),"
      "   drift_state = CASE WHEN b.expected_code_hash = EXCLUDED.expected_code_hash"
      "     THEN b.drift_state ELSE 'unverified' END"
      " WHERE (b.expected_code_hash, b.label) IS DISTINCT FROM"
      "       (EXCLUDED.expected_code_hash, EXCLUDED.label)"
      " RETURNING id"};
  return !exec(tx, q, static_cast<long long>(b.chain_id), b.address, b.expected_code_hash, b.label)
              .empty();
}

drift_record_counts record_baseline_checks(pqxx::connection& conn,
                                           std::vector<baseline_check> checks) {
  static const statement lock{
      "mg_lock_baseline",
      "SELECT drift_state, drift_episode, expected_code_hash, chain_id, address, label"
      " FROM registry_baselines WHERE id = $1 FOR UPDATE"};
  static const statement undecided{
      "mg_baseline_undecided",
      "UPDATE registry_baselines SET last_checked_at = now(), last_error = $2,"
      " updated_at = now() WHERE id = $1"};
  static const statement decided{
      "mg_baseline_decided",
      "UPDATE registry_baselines SET drift_state = $2, observed_code_hash = $3,"
      " last_checked_at = now(), last_error = NULL, updated_at = now(),"
      " last_verified_at = CASE WHEN $4 THEN now() ELSE last_verified_at END,"
      " drift_episode = drift_episode + CASE WHEN $5 THEN 1 ELSE 0 END,"
      " drift_detected_at = CASE WHEN $5 THEN now() ELSE drift_detected_at END,"
      " resolved_at = CASE WHEN $6 THEN now() ELSE resolved_at END"
      " WHERE id = $1 RETURNING drift_episode"};
  // One lock order for every process: no deadlock between two checkers.
  std::sort(checks.begin(), checks.end(), [](auto& a, auto& b) { return a.id < b.id; });
  drift_record_counts counts;
  pqxx::work tx(conn);
  for (const auto& c : checks) {
    auto row = exec(tx, lock, c.id);
    if (row.empty())
      continue; // removed while it was being checked
    if (!c.observed_code_hash) {
      exec(tx, undecided, c.id, c.error);
      ++counts.undecided;
      continue;
    }
    auto previous = domain::parse_drift_state(row[0][0].c_str()).value_or(domain::drift_state::ok);
    std::string expected = row[0][2].c_str();
    bool matches = *c.observed_code_hash == expected;
    auto step = domain::step_drift(previous, matches);
    auto updated =
        exec(tx, decided, c.id, std::string(domain::to_string(step.next)), *c.observed_code_hash,
             matches, step.change == drift_change::detected, step.change == drift_change::resolved);
    int episode = updated[0][0].as<int>();
    std::string subject = std::string(row[0][3].c_str()) + ":" + row[0][4].c_str();
    const std::string payload = json::writer()
                                    .begin_object()
                                    .member("source", "verify_drift")
                                    .member("what", "code_hash")
                                    .member("baseline_id", c.id)
                                    .member("chain_id", row[0][3].as<std::int64_t>())
                                    .member("address", row[0][4].c_str())
                                    .member("label", row[0][5].c_str())
                                    .member("expected", expected)
                                    .member("observed", *c.observed_code_hash)
                                    .member("episode", episode)
                                    .end_object()
                                    .str();
    notify_edge(tx, step.change, "baseline:" + std::to_string(c.id), subject, episode, payload);
    count(counts, step.change);
  }
  tx.commit();
  return counts;
}

drift_record_counts record_drift_observations(pqxx::connection& conn,
                                              std::vector<drift_observation> observations) {
  static const statement ensure{"mg_drift_ensure",
                                "INSERT INTO registry_drift (source, subject) VALUES ($1, $2)"
                                " ON CONFLICT DO NOTHING"};
  static const statement lock{"mg_drift_lock", "SELECT drift_state FROM registry_drift"
                                               " WHERE source = $1 AND subject = $2 FOR UPDATE"};
  static const statement update{
      "mg_drift_update", "UPDATE registry_drift SET drift_state = $3, expected = $4, observed = $5,"
                         " detail = $6::jsonb, last_checked_at = now(),"
                         " drift_episode = drift_episode + CASE WHEN $7 THEN 1 ELSE 0 END,"
                         " drift_detected_at = CASE WHEN $7 THEN now() ELSE drift_detected_at END,"
                         " resolved_at = CASE WHEN $8 THEN now() ELSE resolved_at END"
                         " WHERE source = $1 AND subject = $2 RETURNING drift_episode"};
  std::sort(observations.begin(), observations.end(), [](auto& a, auto& b) {
    return std::tie(a.source, a.subject) < std::tie(b.source, b.subject);
  });
  drift_record_counts counts;
  pqxx::work tx(conn);
  for (const auto& o : observations) {
    exec(tx, ensure, o.source, o.subject);
    auto row = exec(tx, lock, o.source, o.subject);
    auto previous = domain::parse_drift_state(row[0][0].c_str()).value_or(domain::drift_state::ok);
    auto step = domain::step_drift(previous, o.matches);
    auto updated =
        exec(tx, update, o.source, o.subject, std::string(domain::to_string(step.next)), o.expected,
             o.observed, o.detail_json, step.change == drift_change::detected,
             step.change == drift_change::resolved);
    int episode = updated[0][0].as<int>();
    const std::string payload = json::writer()
                                    .begin_object()
                                    .member("source", o.source)
                                    .member("subject", o.subject)
                                    .member("expected", o.expected)
                                    .member("observed", o.observed)
                                    .member("episode", episode)
                                    .key("detail")
                                    .raw(o.detail_json)
                                    .end_object()
                                    .str();
    notify_edge(tx, step.change, o.source + ":" + o.subject, o.source + ":" + o.subject, episode,
                payload);
    count(counts, step.change);
  }
  tx.commit();
  return counts;
}

} // namespace mg::db
