// MG_* settings: defaults, validation, secrets (SPEC §7).
#include "config/settings.hpp"

#include <boost/test/unit_test.hpp>

#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

using mg::config::config_error;
using mg::config::describe;
using mg::config::env_lookup;
using mg::config::load_settings;
using mg::config::process_env;
using cfg_settings = mg::config::settings;

namespace {

using env_map = std::map<std::string, std::string>;

env_lookup env_of(const env_map& m) {
  return [m](const char* name) -> std::optional<std::string> {
    auto it = m.find(name);
    if (it == m.end())
      return std::nullopt;
    return it->second;
  };
}

/// The config_error message load_settings throws, or "" when it accepts.
std::string error_of(const env_map& m) {
  try {
    load_settings(env_of(m));
  } catch (const config_error& e) {
    return e.what();
  }
  return "";
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::string hostname_pid() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(static_cast<long>(getpid()));
}

/// describe() lines as name -> value.
std::map<std::string, std::string> described(const cfg_settings& s) {
  std::map<std::string, std::string> out;
  std::istringstream in(describe(s));
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    BOOST_REQUIRE_MESSAGE(eq != std::string::npos, "line without '=': " + line);
    out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

/// Every name load_settings looks up: the settings' source of truth, so no
/// test pins how many there are.
std::set<std::string> looked_up_names() {
  std::set<std::string> asked;
  load_settings([&](const char* name) -> std::optional<std::string> {
    asked.insert(name);
    return std::nullopt;
  });
  return asked;
}

const char* const db_secret = "postgresql://mg:S3cr3tDbPassw0rd@db.internal:5432/movegate";
const char* const admin_secret = "adm1n-T0ken-zz9-plural-z-alpha";
const char* const callback_secret = "cb-S1gning-Key-qqq-777";

env_map with_secrets(env_map m) {
  m["MG_DATABASE_URL"] = db_secret;
  m["MG_ADMIN_TOKEN"] = admin_secret;
  m["MG_CALLBACK_SECRET"] = callback_secret;
  return m;
}

void check_no_secret(const std::string& text) {
  BOOST_CHECK_MESSAGE(!contains(text, db_secret), "database url leaked: " + text);
  BOOST_CHECK_MESSAGE(!contains(text, "S3cr3tDbPassw0rd"), "database password leaked: " + text);
  BOOST_CHECK_MESSAGE(!contains(text, admin_secret), "admin token leaked: " + text);
  BOOST_CHECK_MESSAGE(!contains(text, callback_secret), "callback secret leaked: " + text);
}

/// Asserts that setting `name` to `value` is refused with a message that
/// starts with "name: " and quotes the value.
void check_rejected(const std::string& name, const std::string& value) {
  const std::string msg = error_of({{name, value}});
  BOOST_TEST_CONTEXT(name << "='" << value << "'") {
    BOOST_CHECK_MESSAGE(starts_with(msg, name + ": "), "message: '" + msg + "'");
    BOOST_CHECK_MESSAGE(contains(msg, "(got '" + value + "')"), "message: '" + msg + "'");
  }
}

void check_accepted(const std::string& name, const std::string& value) {
  const std::string msg = error_of({{name, value}});
  BOOST_CHECK_MESSAGE(msg.empty(), name + "='" + value + "' refused: " + msg);
}

const std::vector<std::string> positive_seconds = {
    "MG_NODE_DISPATCH_INTERVAL_SECONDS",
    "MG_NODE_OBSERVE_INTERVAL_SECONDS",
    "MG_NODE_RECOVERY_INTERVAL_SECONDS",
    "MG_RECONCILE_INTERVAL_SECONDS",
    "MG_NODE_SUBMITTING_GRACE_SECONDS",
    "MG_UNKNOWN_ESCALATE_SECONDS",
    "MG_EXECUTOR_TIMEOUT_SECONDS",
    "MG_CALLBACK_DISPATCH_INTERVAL_SECONDS",
    "MG_CALLBACK_TIMEOUT_SECONDS",
    "MG_EXPIRATION_CHECK_INTERVAL_SECONDS",
    "MG_TEMPLATE_PROPOSAL_EXPIRATION_INTERVAL_SECONDS",
    "MG_EXECUTOR_HEALTH_INTERVAL_SECONDS",
    "MG_AUDIT_OUTBOX_PROMOTER_INTERVAL_SECONDS",
    "MG_EVM_NONCE_REAPER_INTERVAL_SECONDS",
    "MG_CCIP_STRANDED_REAPER_INTERVAL_SECONDS",
    "MG_CAPITAL_TRANSFER_FOLLOWUP_INTERVAL_SECONDS",
    "MG_BALANCE_SNAPSHOT_INTERVAL_SECONDS",
    "MG_CCIP_DRIFT_POLL_INTERVAL_SECONDS",
    "MG_VERIFY_DRIFT_INTERVAL_SECONDS",
    "MG_CLUSTER_LEASE_RENEW_SECONDS",
    "MG_CLUSTER_LEASE_SECONDS",
};

const std::vector<std::string> min_one_integers = {
    "MG_NODE_OBSERVE_BATCH_SIZE",
    "MG_NODE_RECOVERY_BATCH_SIZE",
    "MG_NODE_MAX_ATTEMPTS",
    "MG_APPROVAL_TTL_SECONDS",
    "MG_CALLBACK_MAX_ATTEMPTS",
    "MG_CALLBACK_BATCH_SIZE",
    "MG_API_RATE_LIMIT_PER_SECOND",
    "MG_TEMPLATE_PROPOSAL_TTL_SECONDS",
    "MG_CLUSTER_MAX_SESSIONS_PER_KEY",
    "MG_EXPIRATION_BATCH_SIZE",
    "MG_NODE_DISPATCH_BATCH_SIZE",
};

const std::vector<std::string> booleans = {
    "MG_WORKERS_ENABLED",
    "MG_WAKEUPS_ENABLED",
    "MG_OBSERVE_TIMEOUT_ENFORCEMENT_ENABLED",
    "MG_EVM_NONCE_REAPER_ENABLED",
    "MG_CCIP_STRANDED_REAPER_ENABLED",
    "MG_CAPITAL_TRANSFER_FOLLOWUP_ENABLED",
    "MG_NOTIFY_ENABLED",
    "MG_BALANCE_HISTORY_ENABLED",
    "MG_BALANCE_SNAPSHOT_ENABLED",
    "MG_CCIP_ENABLED",
    "MG_VERIFY_DRIFT_ENABLED",
    "MG_CALLBACK_ALLOW_PRIVATE",
};

const std::vector<std::string> addresses = {"MG_HTTP_ADDR", "MG_ADMIN_ADDR", "MG_CLUSTER_ADDR"};

} // namespace

BOOST_AUTO_TEST_SUITE(settings)

BOOST_AUTO_TEST_CASE(defaults_match_reference) {
  const cfg_settings s = load_settings(env_of({}));
  // process
  BOOST_TEST(s.database_url == "");
  BOOST_TEST(s.network_class == "devnet");
  BOOST_TEST(s.runtime_node == hostname_pid());
  BOOST_TEST(s.workers_enabled == true);
  BOOST_TEST(s.wakeups_enabled == true);
  BOOST_TEST(s.log_level == "info");
  BOOST_TEST(s.db_pool_size == 4);
  BOOST_TEST(s.node_observe_concurrency == 4);
  // loop runner
  BOOST_TEST(s.worker_jitter_seconds == 0.0);
  // core workers
  BOOST_TEST(s.node_dispatch_interval_seconds == 2.0);
  BOOST_TEST(s.node_observe_interval_seconds == 5.0);
  BOOST_TEST(s.node_observe_batch_size == 10);
  BOOST_TEST(s.node_dispatch_batch_size == 32);
  BOOST_TEST(s.node_recovery_interval_seconds == 60.0);
  BOOST_TEST(s.node_recovery_batch_size == 10);
  BOOST_TEST(s.reconcile_interval_seconds == 5.0);
  BOOST_TEST(s.observe_timeout_enforcement_enabled == false);
  BOOST_TEST(s.node_submitting_grace_seconds == 120.0);
  BOOST_TEST(s.node_max_attempts == 5);
  BOOST_TEST(s.unknown_escalate_seconds == 900.0);
  BOOST_TEST(s.executor_timeout_seconds == 30.0);
  BOOST_TEST(s.approval_ttl_seconds == 300);
  // sidecars
  BOOST_TEST(s.callback_dispatch_interval_seconds == 3.0);
  BOOST_TEST(s.callback_max_attempts == 5);
  BOOST_TEST(s.callback_batch_size == 5);
  BOOST_TEST(s.expiration_check_interval_seconds == 30.0);
  BOOST_TEST(s.expiration_batch_size == 20);
  BOOST_TEST(s.template_proposal_expiration_interval_seconds == 30.0);
  BOOST_TEST(s.template_proposal_ttl_seconds == 86400);
  BOOST_TEST(s.local_signer_key_file.empty());
  BOOST_TEST(s.evm_signer_key_file.empty());
  BOOST_TEST(s.executor_health_interval_seconds == 60.0);
  BOOST_TEST(s.audit_outbox_promoter_interval_seconds == 1.0);
  // conditional workers
  BOOST_TEST(s.evm_nonce_reaper_enabled == true);
  BOOST_TEST(s.evm_nonce_reaper_interval_seconds == 60.0);
  BOOST_TEST(s.ccip_stranded_reaper_enabled == true);
  BOOST_TEST(s.ccip_stranded_reaper_interval_seconds == 60.0);
  BOOST_TEST(s.capital_transfer_followup_enabled == false);
  BOOST_TEST(s.capital_transfer_followup_interval_seconds == 60.0);
  BOOST_TEST(s.notify_enabled == false);
  BOOST_TEST(s.balance_history_enabled == true);
  BOOST_TEST(s.cex_transfer_ingest_venues_csv == "");
  BOOST_TEST(s.balance_snapshot_enabled == false);
  BOOST_TEST(s.balance_snapshot_interval_seconds == 30.0);
  BOOST_TEST(s.ccip_enabled == false);
  BOOST_TEST(s.ccip_drift_poll_interval_seconds == 300.0);
  BOOST_TEST(s.verify_drift_enabled == false);
  BOOST_TEST(s.verify_drift_interval_seconds == 21600.0);
  BOOST_TEST(s.evm_rpc_urls.empty());
  BOOST_TEST(s.evm_rpc_timeout_seconds == 10.0);
  BOOST_TEST(s.evm_nonce_reservation_stale_seconds == 300.0);
  BOOST_TEST(s.ccip_stranded_age_seconds == 3600.0);
  BOOST_TEST(s.ccip_sidecar_url.empty());
  BOOST_TEST(s.capital_transfer_stale_seconds == 1800.0);
  BOOST_TEST(s.notify_webhook_url.empty());
  BOOST_TEST(s.notify_secret.empty());
  BOOST_TEST(s.notify_interval_seconds == 5.0);
  BOOST_TEST(s.balance_history_interval_seconds == 3600.0);
  BOOST_TEST(s.gateway_api_url.empty());
  BOOST_TEST(s.balance_stale_threshold_seconds == 120.0);
  BOOST_TEST(s.balance_retention_days == 30);
  BOOST_TEST(s.cex_venue_api_url.empty());
  BOOST_TEST(s.cex_transfer_ingest_interval_seconds == 60.0);
  BOOST_TEST(s.verify_drift_concurrency == 4);
  BOOST_TEST(s.verify_drift_timeout_seconds == 10.0);
  // front doors and cluster
  BOOST_TEST(s.http_addr == "127.0.0.1:8080");
  BOOST_TEST(s.admin_addr == "127.0.0.1:8081");
  BOOST_TEST(s.admin_token == "");
  BOOST_TEST(s.http_request_timeout_seconds == 10);
  BOOST_TEST(s.api_keys_file == "");
  BOOST_TEST(s.callback_secret == "");
  BOOST_TEST(s.callback_allow_private == false);
  BOOST_TEST(s.api_rate_limit_per_second == 1000);
  BOOST_TEST(s.cluster_addr == "127.0.0.1:4242");
  BOOST_TEST(s.cluster_lease_renew_seconds == 2.0);
  BOOST_TEST(s.cluster_lease_seconds == 8.0);
}

BOOST_AUTO_TEST_CASE(reads_every_variable) {
  // Every variable set to a non-default value lands in its own field.
  const env_map env = {
      {"MG_DATABASE_URL", "postgresql://u@h/db"},
      {"MG_NETWORK_CLASS", "mainnet"},
      {"MG_RUNTIME_NODE", "node-a:1"},
      {"MG_WORKERS_ENABLED", "false"},
      {"MG_WAKEUPS_ENABLED", "no"},
      {"MG_LOG_LEVEL", "debug"},
      {"MG_DB_POOL_SIZE", "7"},
      {"MG_WORKER_JITTER_SECONDS", "0.25"},
      {"MG_NODE_DISPATCH_INTERVAL_SECONDS", "2.5"},
      {"MG_NODE_OBSERVE_INTERVAL_SECONDS", "5.5"},
      {"MG_NODE_OBSERVE_BATCH_SIZE", "11"},
      {"MG_NODE_DISPATCH_BATCH_SIZE", "33"},
      {"MG_NODE_OBSERVE_CONCURRENCY", "3"},
      {"MG_NODE_RECOVERY_INTERVAL_SECONDS", "61"},
      {"MG_NODE_RECOVERY_BATCH_SIZE", "12"},
      {"MG_RECONCILE_INTERVAL_SECONDS", "6"},
      {"MG_OBSERVE_TIMEOUT_ENFORCEMENT_ENABLED", "true"},
      {"MG_NODE_SUBMITTING_GRACE_SECONDS", "121"},
      {"MG_NODE_MAX_ATTEMPTS", "6"},
      {"MG_UNKNOWN_ESCALATE_SECONDS", "901"},
      {"MG_EXECUTOR_TIMEOUT_SECONDS", "31"},
      {"MG_APPROVAL_TTL_SECONDS", "301"},
      {"MG_CALLBACK_DISPATCH_INTERVAL_SECONDS", "3.5"},
      {"MG_CALLBACK_MAX_ATTEMPTS", "8"},
      {"MG_CALLBACK_BATCH_SIZE", "9"},
      {"MG_EXPIRATION_CHECK_INTERVAL_SECONDS", "31"},
      {"MG_EXPIRATION_BATCH_SIZE", "21"},
      {"MG_TEMPLATE_PROPOSAL_EXPIRATION_INTERVAL_SECONDS", "32"},
      {"MG_EXECUTOR_HEALTH_INTERVAL_SECONDS", "62"},
      {"MG_AUDIT_OUTBOX_PROMOTER_INTERVAL_SECONDS", "0.5"},
      {"MG_EVM_NONCE_REAPER_ENABLED", "0"},
      {"MG_EVM_NONCE_REAPER_INTERVAL_SECONDS", "63"},
      {"MG_CCIP_STRANDED_REAPER_ENABLED", "FALSE"},
      {"MG_CCIP_STRANDED_REAPER_INTERVAL_SECONDS", "64"},
      {"MG_CAPITAL_TRANSFER_FOLLOWUP_ENABLED", "1"},
      {"MG_CAPITAL_TRANSFER_FOLLOWUP_INTERVAL_SECONDS", "65"},
      {"MG_NOTIFY_ENABLED", "yes"},
      {"MG_BALANCE_HISTORY_ENABLED", "No"},
      {"MG_CEX_TRANSFER_INGEST_VENUES_CSV", "binance,kraken"},
      {"MG_BALANCE_SNAPSHOT_ENABLED", "TRUE"},
      {"MG_BALANCE_SNAPSHOT_INTERVAL_SECONDS", "33"},
      {"MG_CCIP_ENABLED", "Yes"},
      {"MG_CCIP_DRIFT_POLL_INTERVAL_SECONDS", "301"},
      {"MG_VERIFY_DRIFT_ENABLED", "True"},
      {"MG_VERIFY_DRIFT_INTERVAL_SECONDS", "3600"},
      {"MG_HTTP_ADDR", "0.0.0.0:9080"},
      {"MG_ADMIN_ADDR", "localhost:9081"},
      {"MG_ADMIN_TOKEN", "tok"},
      {"MG_API_KEYS_FILE", "/etc/movegate/keys.json"},
      {"MG_CALLBACK_SECRET", "cbs"},
      {"MG_CALLBACK_ALLOW_PRIVATE", "true"},
      {"MG_API_RATE_LIMIT_PER_SECOND", "50"},
      {"MG_CLUSTER_ADDR", "[::1]:0"},
      {"MG_CLUSTER_LEASE_RENEW_SECONDS", "1"},
      {"MG_CLUSTER_LEASE_SECONDS", "4"},
      {"MG_CLUSTER_TLS_CERT_FILE", "/etc/movegate/node.pem"},
      {"MG_CLUSTER_TLS_KEY_FILE", "/etc/movegate/node.key"},
      {"MG_CLUSTER_TLS_CA_FILE", "/etc/movegate/ca.pem"},
  };
  const cfg_settings s = load_settings(env_of(env));
  BOOST_TEST(s.database_url == "postgresql://u@h/db");
  BOOST_TEST(s.network_class == "mainnet");
  BOOST_TEST(s.runtime_node == "node-a:1");
  BOOST_TEST(s.workers_enabled == false);
  BOOST_TEST(s.wakeups_enabled == false);
  BOOST_TEST(s.log_level == "debug");
  BOOST_TEST(s.db_pool_size == 7);
  BOOST_TEST(s.worker_jitter_seconds == 0.25);
  BOOST_TEST(s.node_dispatch_interval_seconds == 2.5);
  BOOST_TEST(s.node_observe_interval_seconds == 5.5);
  BOOST_TEST(s.node_observe_batch_size == 11);
  BOOST_TEST(s.node_dispatch_batch_size == 33);
  BOOST_TEST(s.node_observe_concurrency == 3);
  BOOST_TEST(s.node_recovery_interval_seconds == 61.0);
  BOOST_TEST(s.node_recovery_batch_size == 12);
  BOOST_TEST(s.reconcile_interval_seconds == 6.0);
  BOOST_TEST(s.observe_timeout_enforcement_enabled == true);
  BOOST_TEST(s.node_submitting_grace_seconds == 121.0);
  BOOST_TEST(s.node_max_attempts == 6);
  BOOST_TEST(s.unknown_escalate_seconds == 901.0);
  BOOST_TEST(s.executor_timeout_seconds == 31.0);
  BOOST_TEST(s.approval_ttl_seconds == 301);
  BOOST_TEST(s.callback_dispatch_interval_seconds == 3.5);
  BOOST_TEST(s.callback_max_attempts == 8);
  BOOST_TEST(s.callback_batch_size == 9);
  BOOST_TEST(s.expiration_check_interval_seconds == 31.0);
  BOOST_TEST(s.expiration_batch_size == 21);
  BOOST_TEST(s.template_proposal_expiration_interval_seconds == 32.0);
  BOOST_TEST(s.executor_health_interval_seconds == 62.0);
  BOOST_TEST(s.audit_outbox_promoter_interval_seconds == 0.5);
  BOOST_TEST(s.evm_nonce_reaper_enabled == false);
  BOOST_TEST(s.evm_nonce_reaper_interval_seconds == 63.0);
  BOOST_TEST(s.ccip_stranded_reaper_enabled == false);
  BOOST_TEST(s.ccip_stranded_reaper_interval_seconds == 64.0);
  BOOST_TEST(s.capital_transfer_followup_enabled == true);
  BOOST_TEST(s.capital_transfer_followup_interval_seconds == 65.0);
  BOOST_TEST(s.notify_enabled == true);
  BOOST_TEST(s.balance_history_enabled == false);
  BOOST_TEST(s.cex_transfer_ingest_venues_csv == "binance,kraken");
  BOOST_TEST(s.balance_snapshot_enabled == true);
  BOOST_TEST(s.balance_snapshot_interval_seconds == 33.0);
  BOOST_TEST(s.ccip_enabled == true);
  BOOST_TEST(s.ccip_drift_poll_interval_seconds == 301.0);
  BOOST_TEST(s.verify_drift_enabled == true);
  BOOST_TEST(s.verify_drift_interval_seconds == 3600.0);
  BOOST_TEST(s.http_addr == "0.0.0.0:9080");
  BOOST_TEST(s.admin_addr == "localhost:9081");
  BOOST_TEST(s.admin_token == "tok");
  BOOST_TEST(s.api_keys_file == "/etc/movegate/keys.json");
  BOOST_TEST(s.callback_secret == "cbs");
  BOOST_TEST(s.callback_allow_private == true);
  BOOST_TEST(s.api_rate_limit_per_second == 50);
  BOOST_TEST(s.cluster_addr == "[::1]:0");
  BOOST_TEST(s.cluster_lease_renew_seconds == 1.0);
  BOOST_TEST(s.cluster_lease_seconds == 4.0);
  BOOST_TEST(s.cluster_tls());
  BOOST_TEST(s.cluster_tls_cert_file == "/etc/movegate/node.pem");
  BOOST_TEST(s.cluster_tls_key_file == "/etc/movegate/node.key");
  BOOST_TEST(s.cluster_tls_ca_file == "/etc/movegate/ca.pem");
}

BOOST_AUTO_TEST_CASE(looks_up_only_described_names) {
  // The names load_settings asks for are exactly the names describe() prints.
  const auto asked = looked_up_names();
  std::set<std::string> printed;
  for (const auto& kv : described(load_settings(env_of({}))))
    printed.insert(kv.first);
  BOOST_TEST(!asked.empty());
  BOOST_CHECK(asked == printed);
  for (const auto& n : asked)
    BOOST_CHECK_MESSAGE(starts_with(n, "MG_"), n);
}

BOOST_AUTO_TEST_CASE(node_max_prepare_errors_is_validated) {
  BOOST_TEST(load_settings(env_of({})).node_max_prepare_errors == 10);
  BOOST_TEST(load_settings(env_of({{"MG_NODE_MAX_PREPARE_ERRORS", "3"}})).node_max_prepare_errors ==
             3);
  BOOST_TEST(
      starts_with(error_of({{"MG_NODE_MAX_PREPARE_ERRORS", "0"}}), "MG_NODE_MAX_PREPARE_ERRORS: "));
}

BOOST_AUTO_TEST_CASE(error_message_format) {
  BOOST_TEST(error_of({{"MG_NODE_DISPATCH_INTERVAL_SECONDS", "abc"}}) ==
             "MG_NODE_DISPATCH_INTERVAL_SECONDS: must be a number > 0 (got 'abc')");
  // Empty strings count as set, and are invalid numbers.
  BOOST_TEST(error_of({{"MG_NODE_OBSERVE_BATCH_SIZE", ""}}) ==
             "MG_NODE_OBSERVE_BATCH_SIZE: must be an integer >= 1 (got '')");
  // Control characters are escaped and long values cut, so a message is one line.
  const std::string msg = error_of({{"MG_LOG_LEVEL", "info\nfake log line"}});
  BOOST_TEST(starts_with(msg, "MG_LOG_LEVEL: "));
  BOOST_TEST(!contains(msg, "\n"));
  BOOST_TEST(contains(msg, "info\\x0afake"));
  const std::string long_msg = error_of({{"MG_LOG_LEVEL", std::string(500, 'x')}});
  BOOST_TEST(long_msg.size() < 200u);
  BOOST_TEST(contains(long_msg, "...')"));
}

BOOST_AUTO_TEST_CASE(invalid_intervals_name_their_variable) {
  for (const auto& name : positive_seconds) {
    for (const char* bad : {"abc", "", "0", "-1", "0.0", "5s", " 5", "5 ", "nan", "inf", "0x10",
                            "1e400", "1e10", "1..2", "e5", "."}) {
      check_rejected(name, bad);
    }
  }
  check_accepted("MG_NODE_DISPATCH_INTERVAL_SECONDS", "0.001");
  check_accepted("MG_NODE_DISPATCH_INTERVAL_SECONDS", "1e1");
  check_accepted("MG_NODE_DISPATCH_INTERVAL_SECONDS", "+3");
  check_accepted("MG_NODE_DISPATCH_INTERVAL_SECONDS", "7.");
  check_accepted("MG_NODE_DISPATCH_INTERVAL_SECONDS", ".5");
}

BOOST_AUTO_TEST_CASE(jitter_may_be_zero_but_not_negative) {
  check_accepted("MG_WORKER_JITTER_SECONDS", "0");
  check_accepted("MG_WORKER_JITTER_SECONDS", "1.5");
  for (const char* bad : {"-0.1", "-1", "x", "", "inf"})
    check_rejected("MG_WORKER_JITTER_SECONDS", bad);
  BOOST_TEST(error_of({{"MG_WORKER_JITTER_SECONDS", "-1"}}) ==
             "MG_WORKER_JITTER_SECONDS: must be a number >= 0 (got '-1')");
}

BOOST_AUTO_TEST_CASE(invalid_integers_name_their_variable) {
  for (const auto& name : min_one_integers) {
    for (const char* bad :
         {"abc", "", "0", "-1", "1.5", "1e3", "10 ", " 10", "99999999999", "+", "0x10"}) {
      check_rejected(name, bad);
    }
    check_accepted(name, "1");
  }
  check_accepted("MG_APPROVAL_TTL_SECONDS", "2147483647");
  check_rejected("MG_APPROVAL_TTL_SECONDS", "2147483648");
}

BOOST_AUTO_TEST_CASE(pool_size_range) {
  check_accepted("MG_DB_POOL_SIZE", "1");
  check_accepted("MG_DB_POOL_SIZE", "64");
  for (const char* bad : {"0", "65", "-4", "four", "", "4.0"})
    check_rejected("MG_DB_POOL_SIZE", bad);
  BOOST_TEST(error_of({{"MG_DB_POOL_SIZE", "65"}}) ==
             "MG_DB_POOL_SIZE: must be an integer between 1 and 64 (got '65')");
  check_accepted("MG_NODE_OBSERVE_CONCURRENCY", "1");
  for (const char* bad : {"0", "65", "x"})
    check_rejected("MG_NODE_OBSERVE_CONCURRENCY", bad);
}

BOOST_AUTO_TEST_CASE(enums) {
  for (const char* ok : {"mainnet", "testnet", "devnet"}) {
    BOOST_TEST(load_settings(env_of({{"MG_NETWORK_CLASS", ok}})).network_class == ok);
  }
  for (const char* bad : {"", "Mainnet", "prod", "devnet ", "regtest"})
    check_rejected("MG_NETWORK_CLASS", bad);
  BOOST_TEST(error_of({{"MG_NETWORK_CLASS", "prod"}}) ==
             "MG_NETWORK_CLASS: must be one of mainnet|testnet|devnet (got 'prod')");

  for (const char* ok : {"debug", "info", "warn", "error"}) {
    BOOST_TEST(load_settings(env_of({{"MG_LOG_LEVEL", ok}})).log_level == ok);
  }
  for (const char* bad : {"", "trace", "warning", "INFO", "fatal"})
    check_rejected("MG_LOG_LEVEL", bad);
}

BOOST_AUTO_TEST_CASE(addresses_are_host_port) {
  for (const auto& name : addresses) {
    for (const char* ok : {"127.0.0.1:0", "0.0.0.0:65535", "localhost:80", "my-host.example:8080",
                           "[::1]:8080", "[::]:4242"}) {
      check_accepted(name, ok);
    }
    for (const char* bad : {"", "127.0.0.1", ":8080", "127.0.0.1:", "127.0.0.1:65536",
                            "127.0.0.1:99999", "127.0.0.1:-1", "127.0.0.1:80x", "::1:8080",
                            "[::1:8080", "host name:80", "127.0.0.1:123456"}) {
      check_rejected(name, bad);
    }
  }
}

BOOST_AUTO_TEST_CASE(runtime_node) {
  BOOST_TEST(load_settings(env_of({{"MG_RUNTIME_NODE", "box-7:42"}})).runtime_node == "box-7:42");
  for (const char* bad : {"", "has space", " lead", "trail "})
    check_rejected("MG_RUNTIME_NODE", bad);
  BOOST_TEST(error_of({{"MG_RUNTIME_NODE", "tab\there"}}) ==
             "MG_RUNTIME_NODE: must not contain spaces or control characters (got 'tab\\x09here')");
}

BOOST_AUTO_TEST_CASE(boolean_variants) {
  for (const auto& name : booleans) {
    for (const char* t : {"true", "TRUE", "True", "1", "yes", "YES", "Yes"}) {
      BOOST_TEST_CONTEXT(name << "=" << t) {
        const auto s = load_settings(env_of({{name, t}}));
        BOOST_TEST(described(s)[name] == "true");
      }
    }
    for (const char* f : {"false", "FALSE", "False", "0", "no", "NO", "No"}) {
      BOOST_TEST_CONTEXT(name << "=" << f) {
        const auto s = load_settings(env_of({{name, f}}));
        BOOST_TEST(described(s)[name] == "false");
      }
    }
    for (const char* bad : {"", "on", "off", "y", "n", "2", "-1", " true", "true ", "t", "enabled"})
      check_rejected(name, bad);
  }
  BOOST_TEST(error_of({{"MG_WORKERS_ENABLED", "on"}}) ==
             "MG_WORKERS_ENABLED: must be one of true|false|1|0|yes|no (got 'on')");
}

BOOST_AUTO_TEST_CASE(executor_timeout_below_grace) {
  // Default 30 < 120.
  BOOST_TEST(error_of({}).empty());
  check_accepted("MG_EXECUTOR_TIMEOUT_SECONDS", "119.9");
  for (const char* bad : {"120", "121", "1000"}) {
    const std::string msg = error_of({{"MG_EXECUTOR_TIMEOUT_SECONDS", bad}});
    BOOST_TEST_CONTEXT(bad) {
      BOOST_TEST(starts_with(msg, "MG_EXECUTOR_TIMEOUT_SECONDS: "));
      BOOST_TEST(contains(msg, "MG_NODE_SUBMITTING_GRACE_SECONDS"));
    }
  }
  // Lowering the grace below the default timeout names the timeout, too.
  const std::string msg = error_of({{"MG_NODE_SUBMITTING_GRACE_SECONDS", "30"}});
  BOOST_TEST(starts_with(msg, "MG_EXECUTOR_TIMEOUT_SECONDS: "));
  BOOST_TEST(
      error_of({{"MG_NODE_SUBMITTING_GRACE_SECONDS", "10"}, {"MG_EXECUTOR_TIMEOUT_SECONDS", "5"}})
          .empty());
}

BOOST_AUTO_TEST_CASE(lease_longer_than_renew) {
  check_accepted("MG_CLUSTER_LEASE_SECONDS", "2.5");
  for (const char* bad : {"2", "1"}) {
    const std::string msg = error_of({{"MG_CLUSTER_LEASE_SECONDS", bad}});
    BOOST_TEST_CONTEXT(bad) {
      BOOST_TEST(starts_with(msg, "MG_CLUSTER_LEASE_SECONDS: "));
      BOOST_TEST(contains(msg, "MG_CLUSTER_LEASE_RENEW_SECONDS"));
    }
  }
  BOOST_TEST(starts_with(error_of({{"MG_CLUSTER_LEASE_RENEW_SECONDS", "8"}}),
                         "MG_CLUSTER_LEASE_SECONDS: "));
}

BOOST_AUTO_TEST_CASE(cluster_tls_files_come_as_all_three_or_none) {
  BOOST_TEST(!load_settings(env_of({})).cluster_tls());
  BOOST_TEST(error_of({{"MG_CLUSTER_TLS_CERT_FILE", "/c.pem"}}) ==
             "MG_CLUSTER_TLS_KEY_FILE: must be set along with MG_CLUSTER_TLS_CERT_FILE");
  BOOST_TEST(
      error_of({{"MG_CLUSTER_TLS_CERT_FILE", "/c.pem"}, {"MG_CLUSTER_TLS_KEY_FILE", "/k"}}) ==
      "MG_CLUSTER_TLS_CA_FILE: must be set along with MG_CLUSTER_TLS_KEY_FILE");
  BOOST_TEST(error_of({{"MG_CLUSTER_TLS_CA_FILE", "/ca.pem"}}) ==
             "MG_CLUSTER_TLS_CERT_FILE: must be set along with MG_CLUSTER_TLS_CA_FILE");
}

BOOST_AUTO_TEST_CASE(secrets_never_in_messages) {
  // Every kind of failure, with all three secrets set.
  const std::vector<env_map> failures = {
      {{"MG_NODE_DISPATCH_INTERVAL_SECONDS", "abc"}},
      {{"MG_DB_POOL_SIZE", "0"}},
      {{"MG_WORKERS_ENABLED", "maybe"}},
      {{"MG_NETWORK_CLASS", "prod"}},
      {{"MG_LOG_LEVEL", "loud"}},
      {{"MG_HTTP_ADDR", "nowhere"}},
      {{"MG_HTTP_REQUEST_TIMEOUT_SECONDS", "0"}},
      {{"MG_RUNTIME_NODE", ""}},
      {{"MG_EXECUTOR_TIMEOUT_SECONDS", "500"}},
      {{"MG_CLUSTER_LEASE_SECONDS", "1"}},
  };
  for (const auto& f : failures) {
    const std::string msg = error_of(with_secrets(f));
    BOOST_TEST_CONTEXT(f.begin()->first) {
      BOOST_TEST(starts_with(msg, f.begin()->first + ": "));
      check_no_secret(msg);
    }
  }
  // Secret values are free text: odd-looking ones are accepted, never echoed.
  for (const char* v : {"", "  spaces  ", "not a url", "x\ny"}) {
    BOOST_TEST(error_of({{"MG_DATABASE_URL", v}, {"MG_ADMIN_TOKEN", v}, {"MG_CALLBACK_SECRET", v}})
                   .empty());
  }
}

BOOST_AUTO_TEST_CASE(secrets_never_in_describe) {
  const cfg_settings set = load_settings(env_of(with_secrets({})));
  BOOST_TEST(set.database_url == db_secret);
  BOOST_TEST(set.admin_token == admin_secret);
  BOOST_TEST(set.callback_secret == callback_secret);
  const std::string text = describe(set);
  check_no_secret(text);
  auto lines = described(set);
  BOOST_TEST(lines["MG_DATABASE_URL"] == "<set>");
  BOOST_TEST(lines["MG_ADMIN_TOKEN"] == "<set>");
  BOOST_TEST(lines["MG_CALLBACK_SECRET"] == "<set>");

  auto unset = described(load_settings(env_of({})));
  BOOST_TEST(unset["MG_DATABASE_URL"] == "<unset>");
  BOOST_TEST(unset["MG_ADMIN_TOKEN"] == "<unset>");
  BOOST_TEST(unset["MG_CALLBACK_SECRET"] == "<unset>");
}

BOOST_AUTO_TEST_CASE(describe_one_line_per_setting) {
  const cfg_settings s = load_settings(env_of({}));
  const std::string text = describe(s);
  std::size_t newlines = 0;
  for (char c : text)
    newlines += c == '\n';
  const auto count = looked_up_names().size();
  BOOST_TEST(newlines == count);
  auto lines = described(s);
  BOOST_TEST(lines.size() == count);
  BOOST_TEST(lines["MG_NETWORK_CLASS"] == "devnet");
  BOOST_TEST(lines["MG_RUNTIME_NODE"] == hostname_pid());
  BOOST_TEST(lines["MG_NODE_DISPATCH_INTERVAL_SECONDS"] == "2");
  BOOST_TEST(lines["MG_AUDIT_OUTBOX_PROMOTER_INTERVAL_SECONDS"] == "1");
  BOOST_TEST(lines["MG_VERIFY_DRIFT_INTERVAL_SECONDS"] == "21600");
  BOOST_TEST(lines["MG_WORKER_JITTER_SECONDS"] == "0");
  BOOST_TEST(lines["MG_API_RATE_LIMIT_PER_SECOND"] == "1000");
  BOOST_TEST(lines["MG_HTTP_ADDR"] == "127.0.0.1:8080");
  BOOST_TEST(lines["MG_CEX_TRANSFER_INGEST_VENUES_CSV"] == "");
  // A free-text value with a newline stays on its line.
  const auto odd = load_settings(env_of({{"MG_API_KEYS_FILE", "/tmp/a\nMG_ADMIN_TOKEN=x"}}));
  BOOST_TEST(described(odd).size() == count);
}

BOOST_AUTO_TEST_CASE(describe_round_trips) {
  // Feeding describe() back as the environment reproduces the same settings.
  env_map env = {{"MG_NETWORK_CLASS", "testnet"},
                 {"MG_WORKER_JITTER_SECONDS", "0.125"},
                 {"MG_NODE_OBSERVE_INTERVAL_SECONDS", "0.3"},
                 {"MG_CALLBACK_ALLOW_PRIVATE", "yes"},
                 {"MG_CEX_TRANSFER_INGEST_VENUES_CSV", "a,b"}};
  const cfg_settings first = load_settings(env_of(env));
  env_map again;
  for (const auto& kv : described(first)) {
    if (kv.second == "<set>" || kv.second == "<unset>")
      continue;
    again[kv.first] = kv.second;
  }
  const cfg_settings second = load_settings(env_of(again));
  BOOST_TEST(describe(second) == describe(first));
  BOOST_TEST(second.node_observe_interval_seconds == 0.3);
}

BOOST_AUTO_TEST_CASE(process_env_reads_environment) {
  ::setenv("MG_TEST_SETTINGS_PROBE", "v1", 1);
  const env_lookup env = process_env();
  BOOST_TEST(env("MG_TEST_SETTINGS_PROBE").value_or("<none>") == "v1");
  ::setenv("MG_TEST_SETTINGS_PROBE", "", 1);
  BOOST_TEST(env("MG_TEST_SETTINGS_PROBE").has_value()); // empty counts as set
  ::unsetenv("MG_TEST_SETTINGS_PROBE");
  BOOST_TEST(!env("MG_TEST_SETTINGS_PROBE").has_value());
}

BOOST_AUTO_TEST_CASE(rpc_urls_map_chain_ids_to_endpoints) {
  using mg::config::parse_rpc_urls;
  auto m = parse_rpc_urls("1337=http://127.0.0.1:8545,1=https://rpc.example/v1");
  BOOST_TEST(m.size() == 2u);
  BOOST_TEST(m.at(1337) == "http://127.0.0.1:8545");
  BOOST_TEST(m.at(1) == "https://rpc.example/v1");
  BOOST_TEST(parse_rpc_urls("").empty());
  for (const char* bad : {"1337", "=http://a", "x=http://a", "0=http://a", "1=ftp://a",
                          "1=http://a,1=http://b", "99999999999999999999=http://a"})
    BOOST_CHECK_THROW(parse_rpc_urls(bad), config_error);
  auto s = load_settings(env_of({{"MG_EVM_RPC_URLS", "1337=http://127.0.0.1:8545"}}));
  BOOST_TEST(s.evm_rpc_urls == "1337=http://127.0.0.1:8545");
  BOOST_CHECK_THROW(load_settings(env_of({{"MG_EVM_RPC_URLS", "oops"}})), config_error);
  // A secret is described but never shown.
  auto d = described(load_settings(env_of({{"MG_NOTIFY_SECRET", "hunter2"}})));
  BOOST_TEST(d["MG_NOTIFY_SECRET"] == "<set>");
}

BOOST_AUTO_TEST_SUITE_END()
