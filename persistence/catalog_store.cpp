#include "persistence/catalog_store.hpp"

#include "persistence/db.hpp"

namespace mg::db {

namespace {

/// A timestamptz column as ISO 8601 UTC text.
std::string iso(const std::string& column) {
  return "to_char(" + column + " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')";
}

const std::string template_columns = "template_key, version, graph_hash, plan::text,"
                                     " risk_controls::text, " +
                                     iso("created_at");

template_row template_of(const pqxx::row& r) {
  return {r[0].c_str(), r[1].as<int>(), r[2].c_str(), r[3].c_str(), r[4].c_str(), r[5].c_str()};
}

const std::string proposal_columns =
    "id, template_key, plan::text, state, proposed_by, reviewed_by, " + iso("expires_at") + ", " +
    iso("created_at") + ", " + iso("updated_at") + ", expires_at <= now()";

proposal_row proposal_of(const pqxx::row& r) {
  return {r[0].c_str(), r[1].c_str(), r[2].c_str(), r[3].c_str(), r[4].c_str(),
          str(r[5]),    r[6].c_str(), r[7].c_str(), r[8].c_str(), r[9].as<bool>()};
}

} // namespace

std::vector<template_row> latest_templates(pqxx::transaction_base& tx, const std::string& after_key,
                                           int limit) {
  static const statement q{"mg_latest_templates",
                           "SELECT DISTINCT ON (template_key) " + template_columns +
                               " FROM templates WHERE template_key > $1"
                               " ORDER BY template_key, version DESC LIMIT $2"};
  std::vector<template_row> out;
  for (auto r : exec(tx, q, after_key, limit))
    out.push_back(template_of(r));
  return out;
}

std::vector<template_row> template_versions(pqxx::transaction_base& tx, const std::string& key) {
  static const statement q{"mg_template_versions",
                           "SELECT " + template_columns +
                               " FROM templates WHERE template_key = $1 ORDER BY version DESC"};
  std::vector<template_row> out;
  for (auto r : exec(tx, q, key))
    out.push_back(template_of(r));
  return out;
}

void lock_template_key(pqxx::transaction_base& tx, const std::string& key) {
  static const statement q{"mg_lock_template_key",
                           "SELECT pg_advisory_xact_lock(hashtextextended('template:' || $1, 0))"};
  exec(tx, q, key);
}

proposal_row insert_proposal(pqxx::transaction_base& tx, const std::string& template_key,
                             const std::string& plan, const std::string& proposed_by,
                             int ttl_seconds) {
  static const statement q{
      "mg_insert_proposal",
      "INSERT INTO template_proposals (template_key, plan, proposed_by, expires_at)"
      " VALUES ($1, $2::jsonb, $3, now() + make_interval(secs => $4)) RETURNING " +
          proposal_columns};
  return proposal_of(exec(tx, q, template_key, plan, proposed_by, ttl_seconds)[0]);
}

std::optional<proposal_row> lock_proposal(pqxx::transaction_base& tx, const std::string& id) {
  static const statement q{"mg_lock_proposal", "SELECT " + proposal_columns +
                                                   " FROM template_proposals WHERE id = $1::uuid"
                                                   " FOR UPDATE"};
  auto r = exec(tx, q, id);
  if (r.empty())
    return std::nullopt;
  return proposal_of(r[0]);
}

proposal_row review_proposal(pqxx::transaction_base& tx, const std::string& id,
                             const std::string& state, const std::string& reviewer) {
  static const statement q{"mg_review_proposal",
                           "UPDATE template_proposals SET state = $2, reviewed_by = $3,"
                           " updated_at = clock_timestamp() WHERE id = $1::uuid RETURNING " +
                               proposal_columns};
  return proposal_of(exec(tx, q, id, state, reviewer)[0]);
}

std::vector<executor_row> list_executors(pqxx::transaction_base& tx) {
  static const statement q{"mg_list_executors",
                           "SELECT executor_key, runtime_node, health_state, " +
                               iso("last_health_checked_at") +
                               " FROM executors ORDER BY executor_key, runtime_node"};
  std::vector<executor_row> out;
  for (auto r : exec(tx, q))
    out.push_back({r[0].c_str(), r[1].c_str(), r[2].c_str(), str(r[3])});
  return out;
}

std::vector<signer_row> list_signers(pqxx::transaction_base& tx, const std::string& signer_key) {
  static const statement q{
      "mg_list_signers",
      "SELECT s.signer_key, s.runtime_node, s.health_state, s.observed_signer_address, s.status, " +
          iso("s.last_health_checked_at") +
          ", i.expected_signer_address"
          " FROM signers s LEFT JOIN signer_identities i ON i.signer_key = s.signer_key"
          " WHERE $1 = '' OR s.signer_key = $1"
          " ORDER BY s.signer_key, s.runtime_node"};
  std::vector<signer_row> out;
  for (auto r : exec(tx, q, signer_key))
    out.push_back(
        {r[0].c_str(), r[1].c_str(), r[2].c_str(), str(r[3]), r[4].c_str(), str(r[5]), str(r[6])});
  return out;
}

bool signer_known(pqxx::transaction_base& tx, const std::string& signer_key) {
  static const statement q{"mg_signer_known",
                           "SELECT 1 FROM signers WHERE signer_key = $1 LIMIT 1"};
  return !exec(tx, q, signer_key).empty();
}

void set_expected_identity(pqxx::transaction_base& tx, const std::string& signer_key,
                           const std::string& address) {
  static const statement q{
      "mg_set_expected_identity",
      "INSERT INTO signer_identities (signer_key, expected_signer_address) VALUES ($1, $2)"
      " ON CONFLICT (signer_key) DO UPDATE SET"
      "   expected_signer_address = EXCLUDED.expected_signer_address"};
  exec(tx, q, signer_key, address);
}

std::optional<std::string> expected_identity(pqxx::transaction_base& tx,
                                             const std::string& signer_key) {
  static const statement q{"mg_expected_identity",
                           "SELECT expected_signer_address FROM signer_identities"
                           " WHERE signer_key = $1"};
  auto r = exec(tx, q, signer_key);
  if (r.empty() || r[0][0].is_null())
    return std::nullopt;
  return std::string(r[0][0].c_str());
}

} // namespace mg::db
