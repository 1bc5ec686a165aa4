// Typed, validated MG_* settings (SPEC §7).
#include "config/settings.hpp"

#include "domain/callback_signature.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <unistd.h>

namespace mg::config {

namespace {

/// Largest accepted duration in seconds (~31 years): keeps every interval
/// representable as a std::chrono duration without overflow.
constexpr double max_seconds = 1e9;

enum class rule {
  any,          // free text
  secret,       // free text, never echoed
  node,         // non-empty, printable, no whitespace
  positive,     // number > 0
  non_negative, // number >= 0
  at_least_one, // integer >= 1
  pool_size,    // integer 1..64
  network,      // mainnet|testnet|devnet
  log_level,    // debug|info|warn|error
  address,      // host:port, port 0..65535
  cb_scheme,    // v3|standard-webhooks (MG_CALLBACK_SIGNATURE_SCHEME)
  rpc_urls,     // chain_id=url,... (MG_EVM_RPC_URLS)
};

using member =
    std::variant<std::string settings::*, bool settings::*, int settings::*, double settings::*>;

struct field {
  const char* name;
  member target;
  rule check;
};

// Order: the header's order; validation stops at the first bad value.
const std::vector<field>& fields() {
  static const std::vector<field> all = {
      // process
      {"MG_DATABASE_URL", &settings::database_url, rule::secret},
      {"MG_NETWORK_CLASS", &settings::network_class, rule::network},
      {"MG_RUNTIME_NODE", &settings::runtime_node, rule::node},
      {"MG_WORKERS_ENABLED", &settings::workers_enabled, rule::any},
      {"MG_WAKEUPS_ENABLED", &settings::wakeups_enabled, rule::any},
      {"MG_LOG_LEVEL", &settings::log_level, rule::log_level},
      {"MG_DB_POOL_SIZE", &settings::db_pool_size, rule::pool_size},
      // loop runner
      {"MG_WORKER_JITTER_SECONDS", &settings::worker_jitter_seconds, rule::non_negative},
      // core workers
      {"MG_NODE_DISPATCH_INTERVAL_SECONDS", &settings::node_dispatch_interval_seconds,
       rule::positive},
      {"MG_NODE_DISPATCHERS", &settings::node_dispatchers, rule::pool_size},
      {"MG_NODE_DISPATCH_BATCH_SIZE", &settings::node_dispatch_batch_size, rule::at_least_one},
      {"MG_NODE_OBSERVE_INTERVAL_SECONDS", &settings::node_observe_interval_seconds,
       rule::positive},
      {"MG_NODE_OBSERVE_BATCH_SIZE", &settings::node_observe_batch_size, rule::at_least_one},
      {"MG_NODE_OBSERVE_CONCURRENCY", &settings::node_observe_concurrency, rule::pool_size},
      {"MG_NODE_RECOVERY_INTERVAL_SECONDS", &settings::node_recovery_interval_seconds,
       rule::positive},
      {"MG_NODE_RECOVERY_BATCH_SIZE", &settings::node_recovery_batch_size, rule::at_least_one},
      {"MG_RECONCILE_INTERVAL_SECONDS", &settings::reconcile_interval_seconds, rule::positive},
      {"MG_OBSERVE_TIMEOUT_ENFORCEMENT_ENABLED", &settings::observe_timeout_enforcement_enabled,
       rule::any},
      {"MG_NODE_SUBMITTING_GRACE_SECONDS", &settings::node_submitting_grace_seconds,
       rule::positive},
      {"MG_NODE_MAX_ATTEMPTS", &settings::node_max_attempts, rule::at_least_one},
      {"MG_NODE_MAX_PREPARE_ERRORS", &settings::node_max_prepare_errors, rule::at_least_one},
      {"MG_UNKNOWN_ESCALATE_SECONDS", &settings::unknown_escalate_seconds, rule::positive},
      {"MG_EXECUTOR_TIMEOUT_SECONDS", &settings::executor_timeout_seconds, rule::positive},
      {"MG_APPROVAL_TTL_SECONDS", &settings::approval_ttl_seconds, rule::at_least_one},
      // sidecars
      {"MG_CALLBACK_DISPATCH_INTERVAL_SECONDS", &settings::callback_dispatch_interval_seconds,
       rule::positive},
      {"MG_CALLBACK_MAX_ATTEMPTS", &settings::callback_max_attempts, rule::at_least_one},
      {"MG_CALLBACK_BATCH_SIZE", &settings::callback_batch_size, rule::at_least_one},
      {"MG_CALLBACK_TIMEOUT_SECONDS", &settings::callback_timeout_seconds, rule::positive},
      {"MG_CALLBACK_SIGNATURE_SCHEME", &settings::callback_signature_scheme, rule::cb_scheme},
      {"MG_EXPIRATION_CHECK_INTERVAL_SECONDS", &settings::expiration_check_interval_seconds,
       rule::positive},
      {"MG_EXPIRATION_BATCH_SIZE", &settings::expiration_batch_size, rule::at_least_one},
      {"MG_TEMPLATE_PROPOSAL_EXPIRATION_INTERVAL_SECONDS",
       &settings::template_proposal_expiration_interval_seconds, rule::positive},
      {"MG_EXECUTOR_HEALTH_INTERVAL_SECONDS", &settings::executor_health_interval_seconds,
       rule::positive},
      {"MG_AUDIT_OUTBOX_PROMOTER_INTERVAL_SECONDS",
       &settings::audit_outbox_promoter_interval_seconds, rule::positive},
      {"MG_TEMPLATE_PROPOSAL_TTL_SECONDS", &settings::template_proposal_ttl_seconds,
       rule::at_least_one},
      {"MG_LOCAL_SIGNER_KEY_FILE", &settings::local_signer_key_file, rule::any},
      {"MG_EVM_SIGNER_KEY_FILE", &settings::evm_signer_key_file, rule::any},
      // conditional workers
      {"MG_EVM_NONCE_REAPER_ENABLED", &settings::evm_nonce_reaper_enabled, rule::any},
      {"MG_EVM_NONCE_REAPER_INTERVAL_SECONDS", &settings::evm_nonce_reaper_interval_seconds,
       rule::positive},
      {"MG_CCIP_STRANDED_REAPER_ENABLED", &settings::ccip_stranded_reaper_enabled, rule::any},
      {"MG_CCIP_STRANDED_REAPER_INTERVAL_SECONDS", &settings::ccip_stranded_reaper_interval_seconds,
       rule::positive},
      {"MG_CAPITAL_TRANSFER_FOLLOWUP_ENABLED", &settings::capital_transfer_followup_enabled,
       rule::any},
      {"MG_CAPITAL_TRANSFER_FOLLOWUP_INTERVAL_SECONDS",
       &settings::capital_transfer_followup_interval_seconds, rule::positive},
      {"MG_NOTIFY_ENABLED", &settings::notify_enabled, rule::any},
      {"MG_BALANCE_HISTORY_ENABLED", &settings::balance_history_enabled, rule::any},
      {"MG_CEX_TRANSFER_INGEST_VENUES_CSV", &settings::cex_transfer_ingest_venues_csv, rule::any},
      {"MG_BALANCE_SNAPSHOT_ENABLED", &settings::balance_snapshot_enabled, rule::any},
      {"MG_BALANCE_SNAPSHOT_INTERVAL_SECONDS", &settings::balance_snapshot_interval_seconds,
       rule::positive},
      {"MG_CCIP_ENABLED", &settings::ccip_enabled, rule::any},
      {"MG_CCIP_DRIFT_POLL_INTERVAL_SECONDS", &settings::ccip_drift_poll_interval_seconds,
       rule::positive},
      {"MG_VERIFY_DRIFT_ENABLED", &settings::verify_drift_enabled, rule::any},
      {"MG_VERIFY_DRIFT_INTERVAL_SECONDS", &settings::verify_drift_interval_seconds,
       rule::positive},
      // protocol clients and thresholds
      {"MG_EVM_RPC_URLS", &settings::evm_rpc_urls, rule::rpc_urls},
      {"MG_EVM_RPC_TIMEOUT_SECONDS", &settings::evm_rpc_timeout_seconds, rule::positive},
      {"MG_EVM_NONCE_RESERVATION_STALE_SECONDS", &settings::evm_nonce_reservation_stale_seconds,
       rule::positive},
      {"MG_CCIP_STRANDED_AGE_SECONDS", &settings::ccip_stranded_age_seconds, rule::positive},
      {"MG_CCIP_SIDECAR_URL", &settings::ccip_sidecar_url, rule::any},
      {"MG_CAPITAL_TRANSFER_STALE_SECONDS", &settings::capital_transfer_stale_seconds,
       rule::positive},
      {"MG_NOTIFY_WEBHOOK_URL", &settings::notify_webhook_url, rule::any},
      {"MG_NOTIFY_SECRET", &settings::notify_secret, rule::secret},
      {"MG_NOTIFY_INTERVAL_SECONDS", &settings::notify_interval_seconds, rule::positive},
      {"MG_BALANCE_HISTORY_INTERVAL_SECONDS", &settings::balance_history_interval_seconds,
       rule::positive},
      {"MG_GATEWAY_API_URL", &settings::gateway_api_url, rule::any},
      {"MG_BALANCE_STALE_THRESHOLD_SECONDS", &settings::balance_stale_threshold_seconds,
       rule::positive},
      {"MG_BALANCE_RETENTION_DAYS", &settings::balance_retention_days, rule::at_least_one},
      {"MG_CEX_VENUE_API_URL", &settings::cex_venue_api_url, rule::any},
      {"MG_CEX_TRANSFER_INGEST_INTERVAL_SECONDS", &settings::cex_transfer_ingest_interval_seconds,
       rule::positive},
      {"MG_VERIFY_DRIFT_CONCURRENCY", &settings::verify_drift_concurrency, rule::pool_size},
      {"MG_VERIFY_DRIFT_TIMEOUT_SECONDS", &settings::verify_drift_timeout_seconds, rule::positive},
      // front doors and cluster
      {"MG_HTTP_ADDR", &settings::http_addr, rule::address},
      {"MG_ADMIN_ADDR", &settings::admin_addr, rule::address},
      {"MG_HTTP_REQUEST_TIMEOUT_SECONDS", &settings::http_request_timeout_seconds, rule::positive},
      {"MG_ADMIN_TOKEN", &settings::admin_token, rule::secret},
      {"MG_API_KEYS_FILE", &settings::api_keys_file, rule::any},
      {"MG_CALLBACK_SECRET", &settings::callback_secret, rule::secret},
      {"MG_CALLBACK_ALLOW_PRIVATE", &settings::callback_allow_private, rule::any},
      {"MG_API_RATE_LIMIT_PER_SECOND", &settings::api_rate_limit_per_second, rule::at_least_one},
      {"MG_CLUSTER_ADDR", &settings::cluster_addr, rule::address},
      {"MG_CLUSTER_LEASE_RENEW_SECONDS", &settings::cluster_lease_renew_seconds, rule::positive},
      {"MG_CLUSTER_LEASE_SECONDS", &settings::cluster_lease_seconds, rule::positive},
      {"MG_CLUSTER_MAX_SESSIONS_PER_KEY", &settings::cluster_max_sessions_per_key,
       rule::at_least_one},
      {"MG_CLUSTER_TLS_CERT_FILE", &settings::cluster_tls_cert_file, rule::any},
      {"MG_CLUSTER_TLS_KEY_FILE", &settings::cluster_tls_key_file, rule::any},
      {"MG_CLUSTER_TLS_CA_FILE", &settings::cluster_tls_ca_file, rule::any},
  };
  return all;
}

/// Non-printable bytes as \xNN so describe() stays one line per setting.
std::string escaped(const std::string& value) {
  std::string out;
  for (char ch : value) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out;
}

/// The offending value as shown in a message: one line, long values cut.
std::string shown(const std::string& value) {
  constexpr std::size_t max_len = 80;
  if (value.size() <= max_len)
    return escaped(value);
  return escaped(value.substr(0, max_len)) + "...";
}

[[noreturn]] void fail(const char* name, const std::string& why, const std::string& value) {
  throw config_error(std::string(name) + ": " + why + " (got '" + shown(value) + "')");
}

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return s;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

std::string format_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

bool parse_bool(const char* name, const std::string& raw) {
  const std::string v = lower(raw);
  if (v == "true" || v == "1" || v == "yes")
    return true;
  if (v == "false" || v == "0" || v == "no")
    return false;
  fail(name, "must be one of true|false|1|0|yes|no", raw);
}

/// Strict decimal: [+-]digits[.digits][e[+-]digits]; no spaces, hex, inf or nan.
bool decimal_syntax(const std::string& s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-'))
    ++i;
  std::size_t digits = 0;
  while (i < s.size() && is_digit(s[i]))
    ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i]))
      ++i, ++digits;
  }
  if (digits == 0)
    return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-'))
      ++i;
    std::size_t exp_digits = 0;
    while (i < s.size() && is_digit(s[i]))
      ++i, ++exp_digits;
    if (exp_digits == 0)
      return false;
  }
  return i == s.size();
}

double parse_double(const char* name, const std::string& raw, rule check) {
  const std::string why =
      check == rule::non_negative ? "must be a number >= 0" : "must be a number > 0";
  if (!decimal_syntax(raw))
    fail(name, why, raw);
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(raw.c_str(), &end);
  if (end != raw.c_str() + raw.size() || !std::isfinite(v))
    fail(name, why, raw);
  if (check == rule::non_negative ? v < 0 : v <= 0)
    fail(name, why, raw);
  if (v > max_seconds)
    fail(name, "must be at most " + format_number(max_seconds), raw);
  return v;
}

int parse_int(const char* name, const std::string& raw, rule check) {
  const long long lo = 1;
  const long long hi = check == rule::pool_size ? 64 : std::numeric_limits<int>::max();
  const std::string why =
      check == rule::pool_size ? "must be an integer between 1 and 64" : "must be an integer >= 1";
  std::size_t i = 0;
  if (i < raw.size() && (raw[i] == '+' || raw[i] == '-'))
    ++i;
  if (i == raw.size())
    fail(name, why, raw);
  for (std::size_t j = i; j < raw.size(); ++j)
    if (!is_digit(raw[j]))
      fail(name, why, raw);
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(raw.c_str(), &end, 10);
  if (errno == ERANGE || end != raw.c_str() + raw.size())
    fail(name, why, raw);
  if (v < lo)
    fail(name, why, raw);
  if (v > hi) {
    fail(name, check == rule::pool_size ? why : "must be at most " + std::to_string(hi), raw);
  }
  return static_cast<int>(v);
}

void check_address(const char* name, const std::string& raw) {
  const std::string why = "must be host:port with port 0..65535";
  const auto colon = raw.rfind(':');
  if (colon == std::string::npos)
    fail(name, why, raw);
  const std::string host = raw.substr(0, colon);
  const std::string port = raw.substr(colon + 1);
  if (host.empty())
    fail(name, why, raw);
  if (host.front() == '[') {
    // Bracketed IPv6 literal: [::1]:8080
    if (host.size() < 3 || host.back() != ']')
      fail(name, why, raw);
    for (std::size_t i = 1; i + 1 < host.size(); ++i) {
      const char c = host[i];
      const bool ok =
          is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.';
      if (!ok)
        fail(name, why, raw);
    }
  } else {
    for (char c : host) {
      const bool ok = is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
                      c == '-' || c == '_';
      if (!ok)
        fail(name, why, raw);
    }
  }
  if (port.empty() || port.size() > 5)
    fail(name, why, raw);
  for (char c : port)
    if (!is_digit(c))
      fail(name, why, raw);
  if (std::stol(port) > 65535)
    fail(name, why, raw);
}

std::string parse_string(const char* name, const std::string& raw, rule check) {
  switch (check) {
  case rule::network:
    if (raw != "mainnet" && raw != "testnet" && raw != "devnet")
      fail(name, "must be one of mainnet|testnet|devnet", raw);
    break;
  case rule::log_level:
    if (raw != "debug" && raw != "info" && raw != "warn" && raw != "error")
      fail(name, "must be one of debug|info|warn|error", raw);
    break;
  case rule::address:
    check_address(name, raw);
    break;
  case rule::cb_scheme:
    if (!domain::parse_callback_scheme(raw))
      fail(name, "must be one of v3|standard-webhooks", raw);
    break;
  case rule::rpc_urls:
    parse_rpc_urls(raw);
    break;
  case rule::node:
    if (raw.empty())
      fail(name, "must not be empty", raw);
    for (char c : raw) {
      const unsigned char u = static_cast<unsigned char>(c);
      if (u <= 0x20 || u == 0x7f)
        fail(name, "must not contain spaces or control characters", raw);
    }
    break;
  default: // rule::any, rule::secret: free text, never validated (nothing to echo)
    break;
  }
  return raw;
}

struct named_value {
  const char* name;
  const std::string* value;
};

/// Settings that only make sense together: one set without the others is
/// refused, naming the first one missing.
void require_all_or_none(std::initializer_list<named_value> group) {
  const named_value* set = nullptr;
  for (auto& v : group)
    if (!v.value->empty())
      set = &v;
  if (!set)
    return;
  for (auto& v : group)
    if (v.value->empty())
      throw config_error(std::string(v.name) + ": must be set along with " + set->name);
}

std::string default_runtime_node() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') {
    std::snprintf(host, sizeof host, "localhost");
  }
  host[sizeof host - 1] = '\0';
  return std::string(host) + ":" + std::to_string(static_cast<long>(::getpid()));
}

} // namespace

env_lookup process_env() {
  return [](const char* name) -> std::optional<std::string> {
    if (const char* v = std::getenv(name))
      return std::string(v);
    return std::nullopt;
  };
}

std::map<std::uint64_t, std::string> parse_rpc_urls(const std::string& csv) {
  const char* name = "MG_EVM_RPC_URLS";
  const std::string why = "must be chain_id=http://host:port pairs separated by commas";
  std::map<std::uint64_t, std::string> out;
  std::size_t start = 0;
  while (start < csv.size()) {
    auto end = csv.find(',', start);
    if (end == std::string::npos)
      end = csv.size();
    const std::string pair = csv.substr(start, end - start);
    start = end + 1;
    const auto eq = pair.find('=');
    if (eq == std::string::npos || eq == 0 || eq > 19)
      fail(name, why, csv);
    const std::string id = pair.substr(0, eq);
    const std::string url = pair.substr(eq + 1);
    for (char c : id)
      if (!is_digit(c))
        fail(name, why, csv);
    const std::uint64_t chain = std::stoull(id);
    const bool http = url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
    if (chain == 0 || !http || url.find_first_of(" \t") != std::string::npos)
      fail(name, why, csv);
    if (!out.emplace(chain, url).second)
      fail(name, "names chain " + id + " twice", csv);
  }
  return out;
}

settings load_settings(const env_lookup& env) {
  settings s;
  bool node_set = false;
  for (const field& f : fields()) {
    const std::optional<std::string> raw = env(f.name);
    if (!raw)
      continue;
    if (f.target.index() == 0 && std::get<0>(f.target) == &settings::runtime_node)
      node_set = true;
    std::visit(
        [&](auto ptr) {
          using T = std::decay_t<decltype(s.*ptr)>;
          if constexpr (std::is_same_v<T, bool>) {
            s.*ptr = parse_bool(f.name, *raw);
          } else if constexpr (std::is_same_v<T, int>) {
            s.*ptr = parse_int(f.name, *raw, f.check);
          } else if constexpr (std::is_same_v<T, double>) {
            s.*ptr = parse_double(f.name, *raw, f.check);
          } else {
            s.*ptr = parse_string(f.name, *raw, f.check);
          }
        },
        f.target);
  }
  if (!node_set)
    s.runtime_node = default_runtime_node();

  // Cross checks (SPEC §1: start-up refuses an executor timeout not below the grace).
  if (!(s.executor_timeout_seconds < s.node_submitting_grace_seconds)) {
    fail("MG_EXECUTOR_TIMEOUT_SECONDS",
         "must be below MG_NODE_SUBMITTING_GRACE_SECONDS (" +
             format_number(s.node_submitting_grace_seconds) + ")",
         format_number(s.executor_timeout_seconds));
  }
  if (!(s.cluster_lease_seconds > s.cluster_lease_renew_seconds)) {
    fail("MG_CLUSTER_LEASE_SECONDS",
         "must be greater than MG_CLUSTER_LEASE_RENEW_SECONDS (" +
             format_number(s.cluster_lease_renew_seconds) + ")",
         format_number(s.cluster_lease_seconds));
  }
  require_all_or_none({{"MG_CLUSTER_TLS_CERT_FILE", &s.cluster_tls_cert_file},
                       {"MG_CLUSTER_TLS_KEY_FILE", &s.cluster_tls_key_file},
                       {"MG_CLUSTER_TLS_CA_FILE", &s.cluster_tls_ca_file}});
  // Standard Webhooks keys are "whsec_<base64>"; the secret itself is never echoed.
  if (s.callback_signature_scheme == "standard-webhooks" &&
      !domain::standard_webhooks_key(s.callback_secret))
    throw config_error("MG_CALLBACK_SECRET: must be whsec_<base64> when "
                       "MG_CALLBACK_SIGNATURE_SCHEME=standard-webhooks");
  return s;
}

std::string describe(const settings& s) {
  std::string out;
  for (const field& f : fields()) {
    out += f.name;
    out += '=';
    std::visit(
        [&](auto ptr) {
          using T = std::decay_t<decltype(s.*ptr)>;
          if constexpr (std::is_same_v<T, bool>) {
            out += (s.*ptr) ? "true" : "false";
          } else if constexpr (std::is_same_v<T, int>) {
            out += std::to_string(s.*ptr);
          } else if constexpr (std::is_same_v<T, double>) {
            out += format_number(s.*ptr);
          } else if (f.check == rule::secret) {
            out += (s.*ptr).empty() ? "<unset>" : "<set>";
          } else {
            out += escaped(s.*ptr);
          }
        },
        f.target);
    out += '\n';
  }
  return out;
}

} // namespace mg::config
