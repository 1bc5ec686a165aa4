#include "tests/support/serve_fixture.hpp"
#include "build_paths.hpp"

#include <arpa/inet.h>
#include <cstdio>
#include <fstream>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "domain/json.hpp"

namespace mg::test {

using namespace std::chrono_literals;

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

shell_result run_shell(const std::string& command) {
  shell_result r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p)
    return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    r.output.append(buf, n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string json_field(const std::string& body, const char* name) {
  auto doc = json::parse(body);
  if (!doc || !doc->IsObject() || !doc->HasMember(name))
    return "";
  auto& v = (*doc)[name];
  return v.IsString() ? v.GetString() : json::dump(v);
}

serve_fixture::serve_fixture() {
  static int fixtures = 0;
  prefix = std::string(MG_BINARY_DIR) + "/e2e-" + std::to_string(getpid()) + "-" +
           std::to_string(++fixtures) + "-" + std::to_string(free_port());
  keys_path = prefix + "-keys.json";
}

serve_fixture::~serve_fixture() {
  stop();
  std::remove(keys_path.c_str());
}

std::map<std::string, std::string> serve_fixture::env(const std::string& node) {
  api_port = free_port();
  admin_port = free_port();
  return {{"MG_DATABASE_URL", url},
          {"MG_RUNTIME_NODE", node},
          {"MG_HTTP_ADDR", "127.0.0.1:" + std::to_string(api_port)},
          {"MG_ADMIN_ADDR", "127.0.0.1:" + std::to_string(admin_port)},
          {"MG_ADMIN_TOKEN", admin_token},
          {"MG_API_KEYS_FILE", keys_path},
          {"MG_LOG_LEVEL", "info"}};
}

void serve_fixture::start(const std::string& node,
                          const std::map<std::string, std::string>& extra) {
  auto e = env(node);
  for (auto& [k, v] : extra)
    e[k] = v;
  start_with(e, prefix + "-" + node + ".log");
}

void serve_fixture::start_with(const std::map<std::string, std::string>& environment,
                               const std::string& log) {
  std::ofstream out(keys_path);
  out << "{\"keys\": [";
  for (size_t i = 0; i < keys.size(); ++i)
    out << (i ? "," : "") << "{\"key_id\": " << json::quote(keys[i].id)
        << ", \"secret\": " << json::quote(keys[i].secret)
        << ", \"scopes\": " << keys[i].scopes_json << "}";
  out << "]}";
  out.close();
  server = std::make_unique<child>(std::vector<std::string>{"serve"}, environment, log);
  api_client health(admin_port, "", "");
  request_options unsigned_call;
  unsigned_call.sign = false;
  // A loaded machine starts serve far slower than an idle one: wait for
  // /healthz itself, with a generous bound.
  auto deadline = std::chrono::steady_clock::now() + 90s;
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      if (health.get("/healthz", unsigned_call).status == 200)
        return;
    } catch (const std::runtime_error&) {
      // not listening yet
    }
    BOOST_REQUIRE_MESSAGE(server->running(), server->log());
    std::this_thread::sleep_for(50ms);
  }
  BOOST_FAIL("movegate serve did not answer /healthz: " + server->log());
}

void serve_fixture::stop(int sig) {
  if (server && server->running()) {
    server->signal(sig);
    server->wait(60s);
  }
}

api_reply serve_fixture::admin_get(const std::string& target) const {
  api_client admin(admin_port, "", "");
  request_options o;
  o.sign = false;
  o.headers = {{"Authorization", "Bearer " + admin_token}};
  return admin.get(target, o);
}

bool serve_fixture::wait_state(const std::string& id, const std::string& state) {
  return wait_for(
      "SELECT request_state = '" + state + "' FROM movement_requests WHERE id = '" + id + "'", 60s);
}

} // namespace mg::test
