// `movegate workers`: the supervision tree and heartbeat rows from the admin
// listener's GET /admin/workers (bearer MG_ADMIN_TOKEN), as a table: one row
// per heartbeat (every process), with `running` from this listener's own
// supervision tree ("-" for other processes' workers).
#include <cstdlib>
#include <httplib.h>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "app/common.hpp"
#include "domain/json.hpp"

namespace mg::app {

namespace {

int workers_usage() {
  std::cerr << "usage: movegate workers [--admin URL] [--json]\n"
               "--admin defaults to MG_ADMIN_URL or http://127.0.0.1:8081; the token is\n"
               "MG_ADMIN_TOKEN.\n";
  return 2;
}

std::string text(const json::value& v, const char* key) {
  if (!v.IsObject() || !v.HasMember(key) || v[key].IsNull())
    return "-";
  if (v[key].IsString())
    return v[key].GetString();
  return json::dump(v[key]);
}

/// Seconds with one decimal ("3.2s").
std::string age(const json::value& row) {
  if (!row.HasMember("heartbeat_age_seconds") || !row["heartbeat_age_seconds"].IsNumber())
    return text(row, "heartbeat_age_seconds");
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << row["heartbeat_age_seconds"].GetDouble() << "s";
  return out.str();
}

} // namespace

int cmd_workers(const args& a) {
  if (has_flag(a, "--help") || has_flag(a, "-h"))
    return workers_usage();
  const char* env_url = std::getenv("MG_ADMIN_URL");
  const std::string base =
      flag(a, "--admin", env_url && *env_url ? env_url : "http://127.0.0.1:8081");
  const char* token = std::getenv("MG_ADMIN_TOKEN");
  if (!token || !*token) {
    std::cerr << "movegate workers: MG_ADMIN_TOKEN is not set\n";
    return 2;
  }
  httplib::Client client(base);
  client.set_connection_timeout(5);
  client.set_read_timeout(30);
  auto res = client.Get("/admin/workers", {{"Authorization", std::string("Bearer ") + token}});
  if (!res) {
    std::cerr << "movegate workers: cannot reach " << base << ": "
              << httplib::to_string(res.error()) << "\n";
    return 1;
  }
  auto doc = json::parse(res->body);
  if (res->status != 200) {
    std::string code = "-", message = res->body;
    if (doc && doc->IsObject() && doc->HasMember("error") && (*doc)["error"].IsObject()) {
      code = text((*doc)["error"], "code");
      message = text((*doc)["error"], "message");
    }
    std::cerr << "error: " << res->status << " " << code << ": " << message << "\n";
    return 1;
  }
  if (has_flag(a, "--json") || !doc || !doc->IsObject()) {
    std::cout << res->body << "\n";
    return 0;
  }
  std::map<std::string, bool> running; // this listener's supervision tree, by worker name
  if (doc->HasMember("supervision") && (*doc)["supervision"].IsArray())
    for (const auto& m : (*doc)["supervision"].GetArray())
      if (m.IsObject() && m.HasMember("name") && m["name"].IsString())
        running[m["name"].GetString()] = m.HasMember("running") && m["running"].IsTrue();
  std::vector<std::vector<std::string>> rows{{"WORKER", "GROUP", "RUNNING", "NODE", "STATUS",
                                              "HEARTBEAT", "ITERATIONS", "ERRORS", "LAST_ERROR"}};
  if (doc->HasMember("heartbeats") && (*doc)["heartbeats"].IsArray())
    for (const auto& h : (*doc)["heartbeats"].GetArray()) {
      auto name = text(h, "worker_name");
      auto r = running.find(name);
      rows.push_back({name, text(h, "worker_group"),
                      r == running.end() ? "-" : (r->second ? "yes" : "no"),
                      text(h, "runtime_node"), text(h, "status"), age(h), text(h, "iterations"),
                      text(h, "consecutive_errors"), text(h, "last_error")});
    }
  else
    std::cerr << "warning: heartbeat rows unavailable (database unreachable?)\n";
  print_table(rows);
  return 0;
}

} // namespace mg::app
