// movegate-sibling: an example sibling service (SPEC §8). Over CAF alone
// (no HTTP) it connects to a `movegate serve`'s movement_api, logs in with
// two API keys (four-eyes: one creates, the other approves), creates and
// approves a movement and follows it until COMPLETED, printing every state
// change: with `get` every 100 ms (--follow poll, the default) or by the
// events the server pushes to a subscription (--follow events). Exit 0 on
// COMPLETED, 1 on any other end or error.
//
//   movegate-sibling --cluster 127.0.0.1:4242 --keys keys.json
//       --creator ops-1 --approver ops-2 --template e2e_chain
//       [--asset USDC] [--amount 1] [--input '{"to": "0xabc"}'] [--timeout 60]
//       [--follow poll|events] [--tls-cert PEM --tls-key PEM --tls-ca PEM]
//
// --keys is a file in MG_API_KEYS_FILE's format holding both keys. The
// --tls-* files (all three) connect to a cluster door that requires mutual
// TLS (serve's MG_CLUSTER_TLS_*): this service's certificate and key, and
// the CA the server's certificate chains to. movegate_client sends the
// session token login answered with every call (actors/protocol.hpp): a
// build against an older movegate_client gets 401 and must be rebuilt.
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "actors/cluster/movement_client.hpp"
#include "domain/api_auth.hpp"
#include "domain/json.hpp"
#include "domain/json_writer.hpp"

using namespace std::chrono;

namespace {

int usage() {
  std::cerr << "usage: movegate-sibling --cluster HOST:PORT --keys FILE --creator KEY_ID"
               " --approver KEY_ID --template KEY [--asset A] [--amount N] [--input JSON]"
               " [--timeout SECONDS] [--follow poll|events]"
               " [--tls-cert PEM --tls-key PEM --tls-ca PEM]\n";
  return 2;
}

std::string member(const std::string& body, const char* name) {
  auto doc = mg::json::parse(body);
  if (!doc || !doc->IsObject())
    return "";
  return mg::json::get_string(*doc, name);
}

/// "send=COMPLETED confirm=READY" from a movement's nodes.
std::string node_states(const std::string& body) {
  auto doc = mg::json::parse(body);
  std::string out;
  if (!doc || !doc->IsObject() || !doc->HasMember("nodes") || !(*doc)["nodes"].IsArray())
    return out;
  for (auto& n : (*doc)["nodes"].GetArray())
    out += (out.empty() ? "" : " ") + mg::json::get_string(n, "node_key") + "=" +
           mg::json::get_string(n, "node_state");
  return out;
}

} // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> flags{{"--asset", "USDC"},
                                           {"--amount", "1"},
                                           {"--input", "{}"},
                                           {"--timeout", "60"},
                                           {"--follow", "poll"}};
  for (int i = 1; i + 1 < argc; i += 2)
    flags[argv[i]] = argv[i + 1];
  if (argc % 2 == 0)
    return usage();
  for (auto f : {"--cluster", "--keys", "--creator", "--approver", "--template"})
    if (flags[f].empty())
      return usage();
  if (flags["--follow"] != "poll" && flags["--follow"] != "events")
    return usage();
  bool by_events = flags["--follow"] == "events";
  try {
    // Re-serialised, so the create body is JSON whatever was typed.
    const auto input = mg::json::parse(flags["--input"]);
    if (!input)
      throw std::runtime_error("--input is not JSON");
    const std::string input_params = mg::json::dump(*input);
    std::ifstream in(flags["--keys"]);
    if (!in)
      throw std::runtime_error("cannot read " + flags["--keys"]);
    std::stringstream text;
    text << in.rdbuf();
    std::map<std::string, std::string> secrets;
    for (auto& k : mg::api::parse_api_keys(text.str()))
      secrets[k.key_id] = k.secret;
    for (auto f : {"--creator", "--approver"})
      if (!secrets.count(flags[f]))
        throw std::runtime_error(std::string(f) + " " + flags[f] + " is not in " + flags["--keys"]);
    auto colon = flags["--cluster"].rfind(':');
    if (colon == std::string::npos)
      return usage();
    std::string host = flags["--cluster"].substr(0, colon);
    auto port = static_cast<uint16_t>(std::stoi(flags["--cluster"].substr(colon + 1)));

    std::optional<mg::cluster::tls_files> tls;
    if (flags.count("--tls-cert") || flags.count("--tls-key") || flags.count("--tls-ca")) {
      if (!flags.count("--tls-cert") || !flags.count("--tls-key") || !flags.count("--tls-ca"))
        return usage();
      tls = mg::cluster::tls_files{flags["--tls-cert"], flags["--tls-key"], flags["--tls-ca"]};
    }
    caf::actor_system_config cfg;
    mg::cluster::configure(cfg, tls);
    caf::actor_system sys{cfg};
    mg::cluster::movement_client creator(sys), approver(sys);
    creator.connect(host, port);
    creator.login(flags["--creator"], secrets[flags["--creator"]]);
    approver.connect(host, port);
    approver.login(flags["--approver"], secrets[flags["--approver"]]);
    std::cout << "logged in at " << creator.where() << " as " << flags["--creator"] << " and "
              << flags["--approver"] << std::endl;
    // Subscribed before create, so request_created is not missed: the
    // movement's id is known only once create answers.
    if (by_events) {
      auto sub = creator.subscribe();
      if (sub.status != 200)
        throw std::runtime_error("subscribe answered " + std::to_string(sub.status) + ": " +
                                 sub.body);
    }

    const std::string body =
        mg::json::writer()
            .begin_object()
            .member("template_key", flags["--template"])
            .key("intent")
            .begin_object()
            .member("asset", flags["--asset"])
            .member("amount", flags["--amount"])
            .end_object()
            .key("input_params")
            .raw(input_params)
            .member("idempotency_key", "sibling-" + mg::cluster::random_nonce())
            .end_object()
            .str();
    auto created = creator.create(body);
    if (created.status != 201 && created.status != 200)
      throw std::runtime_error("create answered " + std::to_string(created.status) + ": " +
                               created.body);
    auto id = member(created.body, "id");
    std::cout << "created " << id << " state " << member(created.body, "request_state")
              << std::endl;
    auto approved = approver.approve(id, R"({"approver_id": "movegate-sibling"})");
    if (approved.status != 200)
      throw std::runtime_error("approve answered " + std::to_string(approved.status) + ": " +
                               approved.body);
    std::cout << "approved " << id << std::endl;

    const std::set<std::string> ends{"COMPLETED", "FAILED",  "REJECTED",
                                     "CANCELLED", "EXPIRED", "MANUAL_INTERVENTION"};
    std::string last;
    auto deadline = steady_clock::now() + seconds(std::stoi(flags["--timeout"]));
    while (by_events && steady_clock::now() < deadline) {
      auto left = duration_cast<milliseconds>(deadline - steady_clock::now());
      auto e = creator.next_event(std::max(left, milliseconds(1)));
      if (!e || e->request_id != id)
        continue;
      auto item = mg::json::parse(e->json);
      if (!item || !item->IsObject() || !item->HasMember("payload"))
        continue;
      auto& payload = (*item)["payload"];
      auto state = mg::json::get_string(payload, "request_state");
      std::cout << "event " << mg::json::get_string(*item, "event_type") << " "
                << mg::json::get_string(payload, "node_key") << std::endl;
      if (!state.empty() && state != last) {
        std::cout << "state " << state << std::endl;
        last = state;
      }
      if (ends.count(state))
        return state == "COMPLETED" ? 0 : 1;
    }
    while (!by_events && steady_clock::now() < deadline) {
      auto r = creator.get(id);
      if (r.status != 200)
        throw std::runtime_error("get answered " + std::to_string(r.status) + ": " + r.body);
      auto state = member(r.body, "request_state");
      auto line = state + "  " + node_states(r.body);
      if (line != last) {
        std::cout << "state " << line << std::endl;
        last = line;
      }
      if (ends.count(state))
        return state == "COMPLETED" ? 0 : 1;
      std::this_thread::sleep_for(milliseconds(100));
    }
    std::cerr << "movegate-sibling: " << id << " not COMPLETED within " << flags["--timeout"]
              << " s" << std::endl;
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "movegate-sibling: " << e.what() << std::endl;
    return 1;
  }
}
