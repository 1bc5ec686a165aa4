// `movegate movements list|show|approve|reject|cancel|resume|retry`: the
// operator CLI over the signed /v3 API (SPEC §5). The key comes from a key
// file (one entry as `movegate keys new` prints it); human tables by
// default, `--json` prints the API's body as is. Exit codes: 0 ok, 1 the
// API refused (its error code and message are printed) or is unreachable,
// 2 usage.
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <httplib.h>
#include <iostream>
#include <sstream>

#include "app/common.hpp"
#include "domain/api_auth.hpp"
#include "domain/hash.hpp"
#include "domain/json.hpp"
#include "domain/json_writer.hpp"

namespace mg::app {

namespace {

constexpr const char* default_api_url = "http://127.0.0.1:8080";

int movements_usage() {
  std::cerr << "usage: movegate movements <command> [--api URL] [--key-file F] [--json]\n"
               "  list [--state S] [--limit N] [--cursor C]\n"
               "  show ID\n"
               "  approve ID | resume ID\n"
               "  reject ID [--reason R] | cancel ID [--reason R]\n"
               "  retry ID --node KEY\n"
               "--api defaults to MG_API_URL or http://127.0.0.1:8080; --key-file to\n"
               "MG_CLI_KEY_FILE (one key entry JSON as printed by `movegate keys new`).\n";
  return 2;
}

struct cli_key {
  std::string key_id;
  std::string secret;
};

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

/// One key entry, or the first of a {"keys": [...]} file.
cli_key read_key_file(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw std::invalid_argument("cannot read key file " + path);
  std::stringstream text;
  text << in.rdbuf();
  auto doc = json::parse(text.str());
  if (!doc || !doc->IsObject())
    throw std::invalid_argument("key file " + path + " is not a JSON object");
  const json::value* entry = doc.operator->();
  if (doc->HasMember("keys") && (*doc)["keys"].IsArray() && !(*doc)["keys"].Empty())
    entry = &(*doc)["keys"][0];
  cli_key k{json::get_string(*entry, "key_id"), json::get_string(*entry, "secret")};
  if (k.key_id.empty() || k.secret.empty())
    throw std::invalid_argument("key file " + path + " needs key_id and secret");
  return k;
}

struct http_answer {
  int status = 0;
  std::string body;
};

/// A signed /v3 call (SPEC §5); throws std::runtime_error when unreachable.
http_answer signed_call(const std::string& base, const cli_key& key, const std::string& method,
                        const std::string& target, const std::string& body) {
  httplib::Request req;
  req.method = method;
  req.path = target;
  req.body = body;
  if (!body.empty())
    req.set_header("Content-Type", "application/json");
  auto q = target.find('?');
  const std::string ts = std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count());
  const std::string nonce = domain::random_hex(16);
  req.set_header("X-QTG-Key-Id", key.key_id);
  req.set_header("X-QTG-Timestamp", ts);
  req.set_header("X-QTG-Nonce", nonce);
  req.set_header("X-QTG-Signature",
                 api::sign_request(key.secret, method, target.substr(0, q),
                                   q == std::string::npos ? "" : target.substr(q + 1), body, ts,
                                   nonce));
  httplib::Client client(base);
  client.set_url_encode(false); // the server must see exactly what was signed
  client.set_connection_timeout(5);
  client.set_read_timeout(30);
  auto res = client.send(req);
  if (!res)
    throw std::runtime_error("cannot reach " + base + ": " + httplib::to_string(res.error()));
  return {res->status, res->body};
}

/// Scalar JSON member as text ("-" when absent or null).
std::string cell(const json::value& v, const char* key) {
  if (!v.IsObject() || !v.HasMember(key) || v[key].IsNull())
    return "-";
  const auto& m = v[key];
  if (m.IsString())
    return m.GetString();
  return json::dump(m);
}

/// "ERROR 409 conflict: message" (+ details) on stderr; exit code 1.
int refusal(const http_answer& a) {
  auto doc = json::parse(a.body);
  if (doc && doc->IsObject() && doc->HasMember("error") && (*doc)["error"].IsObject()) {
    const auto& e = (*doc)["error"];
    std::cerr << "error: " << a.status << " " << cell(e, "code") << ": " << cell(e, "message")
              << "\n";
    if (e.HasMember("details") && e["details"].IsArray())
      for (const auto& d : e["details"].GetArray())
        std::cerr << "  " << cell(d, "field") << ": " << cell(d, "message") << "\n";
  } else {
    std::cerr << "error: HTTP " << a.status << ": " << a.body << "\n";
  }
  return 1;
}

void print_movement(const json::value& m) {
  for (const char* k : {"id", "request_state", "approval_status", "template_key",
                        "template_version", "created_at", "updated_at", "expires_at"})
    std::cout << k << ": " << cell(m, k) << "\n";
  if (m.HasMember("current_frontier"))
    std::cout << "current_frontier: " << json::dump(m["current_frontier"]) << "\n";
  if (m.HasMember("intent"))
    std::cout << "intent: " << json::dump(m["intent"]) << "\n";
  std::vector<std::vector<std::string>> rows{{"NODE", "ACTION", "STATE", "ATTEMPT", "ERROR"}};
  if (m.HasMember("nodes") && m["nodes"].IsArray())
    for (const auto& n : m["nodes"].GetArray())
      rows.push_back({cell(n, "node_key"), cell(n, "action_type"), cell(n, "node_state"),
                      cell(n, "attempt_no"), cell(n, "error_code")});
  std::cout << "\n";
  print_table(rows);
}

void print_list(const json::value& page) {
  std::vector<std::vector<std::string>> rows{{"ID", "STATE", "TEMPLATE", "CREATED", "FRONTIER"}};
  if (page.HasMember("items") && page["items"].IsArray())
    for (const auto& m : page["items"].GetArray()) {
      std::string frontier;
      if (m.HasMember("current_frontier") && m["current_frontier"].IsArray())
        for (const auto& f : m["current_frontier"].GetArray())
          frontier +=
              (frontier.empty() ? "" : ",") + std::string(f.IsString() ? f.GetString() : "");
      rows.push_back({cell(m, "id"), cell(m, "request_state"),
                      cell(m, "template_key") + "@" + cell(m, "template_version"),
                      cell(m, "created_at"), frontier.empty() ? "-" : frontier});
    }
  print_table(rows);
  std::string next = cell(page, "next_cursor");
  if (next != "-")
    std::cout << "next: --cursor " << next << "\n";
}

/// Value of `--name` or nullopt; "--name" as the last word is a usage error.
std::optional<std::string> option(const args& a, const std::string& name, bool& bad) {
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] == name) {
      if (i + 1 >= a.size()) {
        bad = true;
        return std::nullopt;
      }
      return a[i + 1];
    }
  return std::nullopt;
}

/// The first word that is neither an option nor an option's value.
std::string positional(const args& a, size_t from) {
  for (size_t i = from; i < a.size(); ++i) {
    if (a[i] == "--json")
      continue;
    if (a[i].rfind("--", 0) == 0) {
      ++i;
      continue;
    }
    return a[i];
  }
  return "";
}

} // namespace

void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i)
        width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size())
        line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    std::cout << line << "\n";
  }
}

int cmd_movements(const args& a) {
  if (a.empty() || a[0] == "--help" || a[0] == "-h")
    return movements_usage();
  const std::string sub = a[0];
  bool bad = false;
  const bool as_json = has_flag(a, "--json");
  const std::string base = option(a, "--api", bad).value_or(env_or("MG_API_URL", default_api_url));
  const std::string key_file = option(a, "--key-file", bad).value_or(env_or("MG_CLI_KEY_FILE", ""));
  auto state = option(a, "--state", bad);
  auto limit = option(a, "--limit", bad);
  auto cursor = option(a, "--cursor", bad);
  auto reason = option(a, "--reason", bad);
  auto node = option(a, "--node", bad);
  if (bad)
    return movements_usage();
  if (key_file.empty()) {
    std::cerr << "movegate movements: no key file (--key-file F or MG_CLI_KEY_FILE)\n";
    return 2;
  }
  cli_key key;
  try {
    key = read_key_file(key_file);
  } catch (const std::invalid_argument& e) {
    std::cerr << "movegate movements: " << e.what() << "\n";
    return 2;
  }

  std::string method = "GET", target, body;
  const std::string id = positional(a, 1);
  if (sub == "list") {
    std::string query;
    auto add = [&](const char* k, const std::optional<std::string>& v) {
      if (v)
        query += (query.empty() ? "?" : "&") + std::string(k) + "=" + api::percent_encode(*v);
    };
    add("state", state);
    add("limit", limit);
    add("cursor", cursor);
    target = "/v3/movements" + query;
  } else if (id.empty()) {
    return movements_usage();
  } else if (sub == "show") {
    target = "/v3/movements/" + api::percent_encode(id);
  } else if (sub == "approve" || sub == "resume" || sub == "reject" || sub == "cancel") {
    method = "POST";
    target = "/v3/movements/" + api::percent_encode(id) + "/" + sub;
    body = (reason && (sub == "reject" || sub == "cancel"))
               ? json::writer().begin_object().member("reason", *reason).end_object().str()
               : "{}";
  } else if (sub == "retry") {
    if (!node)
      return movements_usage();
    method = "POST";
    target = "/v3/movements/" + api::percent_encode(id) + "/retry";
    body = json::writer().begin_object().member("node_key", *node).end_object().str();
  } else {
    return movements_usage();
  }

  http_answer answer;
  try {
    answer = signed_call(base, key, method, target, body);
  } catch (const std::runtime_error& e) {
    std::cerr << "movegate movements: " << e.what() << "\n";
    return 1;
  }
  if (answer.status < 200 || answer.status >= 300)
    return refusal(answer);
  if (as_json) {
    std::cout << answer.body << "\n";
    return 0;
  }
  auto doc = json::parse(answer.body);
  if (!doc || !doc->IsObject()) {
    std::cout << answer.body << "\n";
    return 0;
  }
  if (sub == "list")
    print_list(*doc);
  else
    print_movement(*doc);
  return 0;
}

} // namespace mg::app
