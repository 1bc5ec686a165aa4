#pragma once
// Typed, validated MG_* settings (SPEC §7; defaults are the reference's).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

namespace mg::config {

/// Thrown by load_settings; what() names the offending variable.
struct config_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct settings {
  // --- process -----------------------------------------------------------
  std::string database_url;             // MG_DATABASE_URL (no default; secret: never logged)
  std::string network_class = "devnet"; // MG_NETWORK_CLASS: mainnet|testnet|devnet
  std::string runtime_node;             // MG_RUNTIME_NODE, default "<hostname>:<pid>"
  bool workers_enabled = true;          // MG_WORKERS_ENABLED
  bool wakeups_enabled = true;          // MG_WAKEUPS_ENABLED
  std::string log_level = "info";       // MG_LOG_LEVEL: debug|info|warn|error
  int db_pool_size = 4;                 // MG_DB_POOL_SIZE (1..64): reconcile connections

  // --- loop runner ---------------------------------------------------------
  double worker_jitter_seconds = 0; // MG_WORKER_JITTER_SECONDS (>= 0)

  // --- core workers --------------------------------------------------------
  double node_dispatch_interval_seconds = 2; // MG_NODE_DISPATCH_INTERVAL_SECONDS
  // MG_NODE_DISPATCHERS (1..64): parallel instances of the serial
  // dispatcher (wake-ups on; off always runs one). A dispatcher spends most
  // of a node waiting on commits and the provider, so a few keep the
  // database busy instead of one waiting in turn.
  int node_dispatchers = 4;
  // MG_NODE_DISPATCH_BATCH_SIZE (>= 1): READY nodes one claim transaction
  // may take, only of executors that claim in batch (wake-ups off: 1).
  int node_dispatch_batch_size = 32;
  double node_observe_interval_seconds = 5; // MG_NODE_OBSERVE_INTERVAL_SECONDS
  int node_observe_batch_size = 10;         // MG_NODE_OBSERVE_BATCH_SIZE
  int node_observe_concurrency = 4;         // MG_NODE_OBSERVE_CONCURRENCY (1..64): own connections
  double node_recovery_interval_seconds = 60;       // MG_NODE_RECOVERY_INTERVAL_SECONDS
  int node_recovery_batch_size = 10;                // MG_NODE_RECOVERY_BATCH_SIZE (>= 1)
  double reconcile_interval_seconds = 5;            // MG_RECONCILE_INTERVAL_SECONDS
  bool observe_timeout_enforcement_enabled = false; // MG_OBSERVE_TIMEOUT_ENFORCEMENT_ENABLED
  double node_submitting_grace_seconds = 120;       // MG_NODE_SUBMITTING_GRACE_SECONDS
  int node_max_attempts = 5;                        // MG_NODE_MAX_ATTEMPTS (>= 1)
  int node_max_prepare_errors = 10;                 // MG_NODE_MAX_PREPARE_ERRORS (>= 1)
  double unknown_escalate_seconds = 900;            // MG_UNKNOWN_ESCALATE_SECONDS
  double executor_timeout_seconds = 30;             // MG_EXECUTOR_TIMEOUT_SECONDS (< grace)
  int approval_ttl_seconds = 300;                   // MG_APPROVAL_TTL_SECONDS

  // --- sidecars (later issues use them; defaults fixed here) ----------------
  double callback_dispatch_interval_seconds = 3; // MG_CALLBACK_DISPATCH_INTERVAL_SECONDS
  int callback_max_attempts = 5;                 // MG_CALLBACK_MAX_ATTEMPTS
  int callback_batch_size = 5;                   // MG_CALLBACK_BATCH_SIZE
  // MG_CALLBACK_TIMEOUT_SECONDS: each of connect/read/write of one attempt.
  double callback_timeout_seconds = 10;
  // MG_CALLBACK_SIGNATURE_SCHEME: v3|standard-webhooks (needs a whsec_ secret).
  std::string callback_signature_scheme = "v3";
  double expiration_check_interval_seconds = 30; // MG_EXPIRATION_CHECK_INTERVAL_SECONDS
  int expiration_batch_size = 20; // MG_EXPIRATION_BATCH_SIZE (the reference's LIMIT 20)
  double template_proposal_expiration_interval_seconds =
      30;                                       // MG_TEMPLATE_PROPOSAL_EXPIRATION_INTERVAL_SECONDS
  double executor_health_interval_seconds = 60; // MG_EXECUTOR_HEALTH_INTERVAL_SECONDS
  double audit_outbox_promoter_interval_seconds = 1; // MG_AUDIT_OUTBOX_PROMOTER_INTERVAL_SECONDS
  int template_proposal_ttl_seconds = 86400;         // MG_TEMPLATE_PROPOSAL_TTL_SECONDS
  std::string local_signer_key_file; // MG_LOCAL_SIGNER_KEY_FILE: PEM secp256k1 key → signer "local"
  std::string evm_signer_key_file; // MG_EVM_SIGNER_KEY_FILE: hex secp256k1 key → signer "evm_local"

  // --- conditional workers -------------------------------------------------
  bool evm_nonce_reaper_enabled = true;              // MG_EVM_NONCE_REAPER_ENABLED
  double evm_nonce_reaper_interval_seconds = 60;     // MG_EVM_NONCE_REAPER_INTERVAL_SECONDS
  bool ccip_stranded_reaper_enabled = true;          // MG_CCIP_STRANDED_REAPER_ENABLED
  double ccip_stranded_reaper_interval_seconds = 60; // MG_CCIP_STRANDED_REAPER_INTERVAL_SECONDS
  bool capital_transfer_followup_enabled = false;    // MG_CAPITAL_TRANSFER_FOLLOWUP_ENABLED
  double capital_transfer_followup_interval_seconds =
      60;                                        // MG_CAPITAL_TRANSFER_FOLLOWUP_INTERVAL_SECONDS
  bool notify_enabled = false;                   // MG_NOTIFY_ENABLED
  bool balance_history_enabled = true;           // MG_BALANCE_HISTORY_ENABLED
  std::string cex_transfer_ingest_venues_csv;    // MG_CEX_TRANSFER_INGEST_VENUES_CSV
  bool balance_snapshot_enabled = false;         // MG_BALANCE_SNAPSHOT_ENABLED
  double balance_snapshot_interval_seconds = 30; // MG_BALANCE_SNAPSHOT_INTERVAL_SECONDS
  bool ccip_enabled = false;                     // MG_CCIP_ENABLED
  double ccip_drift_poll_interval_seconds = 300; // MG_CCIP_DRIFT_POLL_INTERVAL_SECONDS
  bool verify_drift_enabled = false;             // MG_VERIFY_DRIFT_ENABLED
  double verify_drift_interval_seconds = 21600;  // MG_VERIFY_DRIFT_INTERVAL_SECONDS

  // --- protocol clients and thresholds of the conditional workers -------------
  // MG_EVM_RPC_URLS: "chain_id=http://host:port,..." — the JSON-RPC endpoint
  // per chain (evm executor, evm_nonce_reaper, verify_drift).
  std::string evm_rpc_urls;
  double evm_rpc_timeout_seconds = 10;              // MG_EVM_RPC_TIMEOUT_SECONDS
  double evm_nonce_reservation_stale_seconds = 300; // MG_EVM_NONCE_RESERVATION_STALE_SECONDS
  double ccip_stranded_age_seconds = 3600;          // MG_CCIP_STRANDED_AGE_SECONDS
  std::string ccip_sidecar_url;                     // MG_CCIP_SIDECAR_URL
  double capital_transfer_stale_seconds = 1800;     // MG_CAPITAL_TRANSFER_STALE_SECONDS
  std::string notify_webhook_url;                   // MG_NOTIFY_WEBHOOK_URL
  std::string notify_secret;                        // MG_NOTIFY_SECRET (secret)
  double notify_interval_seconds = 5;               // MG_NOTIFY_INTERVAL_SECONDS
  double balance_history_interval_seconds = 3600;   // MG_BALANCE_HISTORY_INTERVAL_SECONDS
  std::string gateway_api_url;                      // MG_GATEWAY_API_URL
  double balance_stale_threshold_seconds = 120;     // MG_BALANCE_STALE_THRESHOLD_SECONDS
  int balance_retention_days = 30;                  // MG_BALANCE_RETENTION_DAYS
  std::string cex_venue_api_url;                    // MG_CEX_VENUE_API_URL
  double cex_transfer_ingest_interval_seconds = 60; // MG_CEX_TRANSFER_INGEST_INTERVAL_SECONDS
  int verify_drift_concurrency = 4;                 // MG_VERIFY_DRIFT_CONCURRENCY (1..64)
  double verify_drift_timeout_seconds = 10;         // MG_VERIFY_DRIFT_TIMEOUT_SECONDS

  // --- front doors and cluster (SPEC §5, §7, §8) ------------------------------
  std::string http_addr = "127.0.0.1:8080";    // MG_HTTP_ADDR (host:port)
  std::string admin_addr = "127.0.0.1:8081";   // MG_ADMIN_ADDR (host:port)
  double http_request_timeout_seconds = 10;    // MG_HTTP_REQUEST_TIMEOUT_SECONDS (headers + body)
  std::string admin_token;                     // MG_ADMIN_TOKEN (secret)
  std::string api_keys_file;                   // MG_API_KEYS_FILE
  std::string callback_secret;                 // MG_CALLBACK_SECRET (secret)
  bool callback_allow_private = false;         // MG_CALLBACK_ALLOW_PRIVATE
  int api_rate_limit_per_second = 1000;        // MG_API_RATE_LIMIT_PER_SECOND
  std::string cluster_addr = "127.0.0.1:4242"; // MG_CLUSTER_ADDR (host:port, port 0 = any)
  double cluster_lease_renew_seconds = 2;      // MG_CLUSTER_LEASE_RENEW_SECONDS
  double cluster_lease_seconds = 8;            // MG_CLUSTER_LEASE_SECONDS (> renew)
  int cluster_max_sessions_per_key = 16;       // MG_CLUSTER_MAX_SESSIONS_PER_KEY (live sessions)
  // Mutual TLS on the cluster door (all three or none; required off loopback).
  std::string cluster_tls_cert_file; // MG_CLUSTER_TLS_CERT_FILE: PEM certificate this node presents
  std::string cluster_tls_key_file;  // MG_CLUSTER_TLS_KEY_FILE: its unencrypted PEM key
  std::string cluster_tls_ca_file; // MG_CLUSTER_TLS_CA_FILE: CA every peer's certificate chains to
  bool cluster_tls() const { return !cluster_tls_cert_file.empty(); }
};

/// Looks a variable up; nullopt when unset. Empty strings count as set.
using env_lookup = std::function<std::optional<std::string>(const char* name)>;

/// The process environment.
env_lookup process_env();

/// Reads every MG_* variable above through `env`, applies defaults, and
/// validates: booleans are true|false|1|0|yes|no (case-insensitive),
/// numbers must parse completely and lie in range (intervals > 0, batch
/// sizes >= 1, grace > executor timeout, lease > renew), enums must be one
/// of their values, addresses host:port with port 0..65535.
/// Throws config_error("MG_X: <why> (got '<value>')") on the first invalid
/// value; secrets are never echoed in the message.
settings load_settings(const env_lookup& env);

/// MG_EVM_RPC_URLS parsed: chain id → endpoint URL. Throws config_error for
/// anything but comma-separated `id=http(s)://...` pairs with distinct ids > 0.
std::map<std::uint64_t, std::string> parse_rpc_urls(const std::string& csv);

/// One line per setting, "MG_X=value", secrets shown as "<set>"/"<unset>".
std::string describe(const settings& s);

} // namespace mg::config
