#pragma once
// The catalog's SQL (SPEC §2–§5): template versions, template proposals,
// executor and signer rows, expected signer identities. Times are returned
// as ISO 8601 UTC text.
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

namespace mg::db {

struct template_row {
  std::string template_key;
  int version = 0;
  std::string graph_hash;
  std::string plan;          // JSON object text
  std::string risk_controls; // JSON object text
  std::string created_at;
};

/// The latest version of each key with key > `after_key` ("" = from the
/// start), in key order, at most `limit` rows.
std::vector<template_row> latest_templates(pqxx::transaction_base& tx, const std::string& after_key,
                                           int limit);

/// Every version of `key`, newest first (empty: unknown key).
std::vector<template_row> template_versions(pqxx::transaction_base& tx, const std::string& key);

/// Serialises publications of `key` until `tx` ends, so two approvals never
/// pick the same next version.
void lock_template_key(pqxx::transaction_base& tx, const std::string& key);

struct proposal_row {
  std::string id;
  std::string template_key;
  std::string plan; // JSON object text
  std::string state;
  std::string proposed_by;
  std::string reviewed_by; // "" = none
  std::string expires_at;
  std::string created_at;
  std::string updated_at;
  bool expired = false; // expires_at has passed
};

/// Inserts a pending proposal expiring `ttl_seconds` from now.
proposal_row insert_proposal(pqxx::transaction_base& tx, const std::string& template_key,
                             const std::string& plan, const std::string& proposed_by,
                             int ttl_seconds);

/// The proposal, locked FOR UPDATE; nullopt when there is none (`id` must
/// be a UUID).
std::optional<proposal_row> lock_proposal(pqxx::transaction_base& tx, const std::string& id);

/// Moves a proposal to `state` (approved|rejected) reviewed by `reviewer`.
proposal_row review_proposal(pqxx::transaction_base& tx, const std::string& id,
                             const std::string& state, const std::string& reviewer);

struct executor_row {
  std::string executor_key;
  std::string runtime_node;
  std::string health_state;
  std::string last_health_checked_at; // "" = never
};

std::vector<executor_row> list_executors(pqxx::transaction_base& tx);

struct signer_row {
  std::string signer_key;
  std::string runtime_node;
  std::string health_state;
  std::string observed_signer_address; // "" = none
  std::string status;                  // active|orphan
  std::string last_health_checked_at;  // "" = never
  std::string expected_signer_address; // "" = not enrolled
};

/// Signer rows with their key's expected identity, by key then process;
/// only `signer_key`'s rows when it is not empty.
std::vector<signer_row> list_signers(pqxx::transaction_base& tx,
                                     const std::string& signer_key = "");

/// True when any process has recorded `signer_key`.
bool signer_known(pqxx::transaction_base& tx, const std::string& signer_key);

/// Sets the key's expected address (the sole writer of it).
void set_expected_identity(pqxx::transaction_base& tx, const std::string& signer_key,
                           const std::string& address);

/// The key's enrolled expected address, if an operator set one.
std::optional<std::string> expected_identity(pqxx::transaction_base& tx,
                                             const std::string& signer_key);

} // namespace mg::db
