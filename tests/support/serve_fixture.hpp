#pragma once
// A `movegate serve` child on the test's own database with free ports, an
// API keys file and an admin token, for the end-to-end tests that talk to it
// over HTTP.
#include <csignal>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/api_client.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/process.hpp"

namespace mg::test {

/// A port nobody listens on right now (bound, then released).
int free_port();

/// Runs a shell command; its exit status and combined output.
struct shell_result {
  int status = -1;
  std::string output;
};
shell_result run_shell(const std::string& command);

/// Member `name` of a JSON object body as text ("" when absent; non-strings
/// as their JSON).
std::string json_field(const std::string& body, const char* name);

struct api_key_spec {
  std::string id;
  std::string secret;
  std::string scopes_json; // e.g. R"(["create", "read"])"
};

struct serve_fixture : db_fixture {
  serve_fixture();
  ~serve_fixture();

  std::vector<api_key_spec> keys; // written to keys_path by start()
  std::string admin_token = "e2e-admin-token-0123456789";
  int api_port = 0;
  int admin_port = 0;
  /// Unique per fixture: files of this test (logs, keys) start with it.
  std::string prefix;
  std::string keys_path;
  std::unique_ptr<child> server;

  /// The environment start() gives the process (fresh ports each time).
  std::map<std::string, std::string> env(const std::string& node = "e2e");
  /// Starts `movegate serve` with env(node) plus `extra` and waits for
  /// /healthz.
  void start(const std::string& node = "e2e", const std::map<std::string, std::string>& extra = {});
  /// Starts it with exactly `environment` (see env()).
  void start_with(const std::map<std::string, std::string>& environment, const std::string& log);
  /// Signals the process (if running) and waits for it.
  void stop(int sig = SIGTERM);

  api_client client(const api_key_spec& k) const { return api_client(api_port, k.id, k.secret); }
  /// GET on the admin listener with the bearer token.
  api_reply admin_get(const std::string& target) const;
  /// Polls until the request is in `state` (15 s at most).
  bool wait_state(const std::string& id, const std::string& state);
};

} // namespace mg::test
