// movegate demo: the runtime in-process against MG_DATABASE_URL, a few sim
// movements created and approved, their progress shown until each settles.
#include <chrono>
#include <iomanip>
#include <iostream>
#include <map>
#include <thread>

#include "actors/system_config.hpp"
#include "app/common.hpp"
#include "domain/json_writer.hpp"
#include "executors/registry.hpp"
#include "executors/sim.hpp"
#include "persistence/catalog_store.hpp"
#include "persistence/db.hpp"
#include "persistence/migrate.hpp"
#include "persistence/transaction.hpp"

namespace mg::app {

namespace {

using domain::request_state;

/// Ganache's deterministic wallet account 1 (scripts/with-ganache.sh).
constexpr std::uint64_t demo_evm_chain_id = 1337; // templates/evm_*.json pin it
constexpr const char* demo_evm_recipient = "0xFFcf8FDEE72ac11b5c542428B35EEF5769C409f0";

struct demo_movement {
  std::string label;
  std::string template_key;
  request_state expected_state;
  std::string id;
  std::string last_line;
  bool settled = false;
};

std::string describe_progress(const db::request_snapshot& s) {
  std::string out = std::string(domain::to_string(s.request_state)) + "  ";
  for (auto& n : s.nodes) {
    out += n.node_key + "=" + std::string(domain::to_string(n.node_state));
    if (!n.error_code.empty())
      out += "(" + n.error_code + ")";
    out += " ";
  }
  return out;
}

bool settled(request_state state) {
  return state == request_state::completed || state == request_state::failed ||
         state == request_state::manual_intervention || state == request_state::cancelled ||
         state == request_state::rejected || state == request_state::expired;
}

/// sim_linear's cctp_burn is signed by the sim signer: the dispatcher's
/// caller-alignment check sends a burn only from an enrolled identity, so the
/// demo enrols the sim signer's (an operator would PUT
/// /v3/signers/sim/expected-identity).
void enrol_sim_signer(const std::string& database_url) {
  auto conn = db::connect(database_url);
  db::committed(*conn, [](pqxx::transaction_base& tx) {
    db::set_expected_identity(tx, "sim", executors::sim_signer::address);
  });
  std::cout << "demo: enrolled the sim signer's identity " << executors::sim_signer::address
            << std::endl;
}

/// Stops the runtime and waits for its verdict.
int stop_runtime(caf::scoped_actor& self, actors::runtime& rt) {
  rt.shutdown();
  int code = 1;
  self->receive([&](actors::done_atom, int c) { code = c; },
                caf::after(std::chrono::seconds(30)) >> [&] { code = 1; });
  return code;
}

} // namespace

int cmd_demo(const args& a) {
  auto s = load_settings_or_exit();
  double timeout_s = std::stod(flag(a, "--timeout", "120"));
  std::cout << "demo: migrating " << std::flush;
  db::migrate(s.database_url, db::bundled_migrations());
  std::cout << "ok; loading templates from " << default_templates_dir() << std::endl;
  load_templates(s.database_url, default_templates_dir(), true);
  enrol_sim_signer(s.database_url);

  caf::actor_system_config cfg;
  actors::configure(cfg);
  caf::actor_system sys{cfg};
  const bool evm = has_flag(a, "--evm");
  if (evm && (s.evm_rpc_urls.empty() || s.evm_signer_key_file.empty())) {
    std::cerr << "demo --evm needs MG_EVM_RPC_URLS and MG_EVM_SIGNER_KEY_FILE (scripts/demo.sh "
                 "--evm starts a local chain and sets both)"
              << std::endl;
    return 2;
  }
  if (evm && !config::parse_rpc_urls(s.evm_rpc_urls).count(demo_evm_chain_id)) {
    std::cerr << "demo --evm: the evm templates pin chain " << demo_evm_chain_id
              << " (the local chain's); MG_EVM_RPC_URLS names no endpoint for it" << std::endl;
    return 2;
  }
  actors::runtime rt(sys, s, executors::configured_providers(s));
  caf::scoped_actor self{sys};
  rt.start(caf::actor_cast<caf::actor>(self));

  std::vector<demo_movement> movements{
      {"linear-1", "sim_linear", request_state::completed, {}, {}, false},
      {"linear-2", "sim_linear", request_state::completed, {}, {}, false},
      {"fan-out/fan-in", "sim_fan", request_state::completed, {}, {}, false},
      {"ends-in-manual", "sim_manual", request_state::manual_intervention, {}, {}, false},
  };
  if (evm)
    movements.push_back(
        {"evm-transfer", "evm_native_transfer", request_state::completed, {}, {}, false});
  auto conn = db::connect(s.database_url);
  auto run_tag = std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
  for (auto& m : movements) {
    db::create_params p;
    p.template_key = m.template_key;
    p.intent = R"({"asset": "USDC", "amount": "1250.00", "destination": "0xabc"})";
    p.input_params = R"({"venue": "sim-exchange"})";
    if (m.template_key == "evm_native_transfer") {
      // 1.5 ETH to the local chain's wallet account 1, on the chain the
      // template pins (1337, the local chain's).
      p.intent = json::writer()
                     .begin_object()
                     .member("asset", "ETH")
                     .member("amount", "1.5")
                     .member("destination", demo_evm_recipient)
                     .end_object()
                     .str();
      p.input_params = "{}";
    }
    p.idempotency_key = "demo-" + run_tag + "-" + m.label;
    p.created_by = "demo";
    p.network_class = s.network_class;
    m.id = create_and_approve(*conn, rt, p);
    std::cout << "demo: created and approved " << std::left << std::setw(16) << m.label << m.id
              << std::endl;
  }

  auto start = std::chrono::steady_clock::now();
  size_t remaining = movements.size();
  while (remaining > 0) {
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > timeout_s) {
      std::cout << "demo: timed out after " << timeout_s << " s" << std::endl;
      break;
    }
    db::committed(*conn, [&](pqxx::transaction_base& tx) {
      for (auto& m : movements) {
        if (m.settled)
          continue;
        auto snap = db::load_request(tx, m.id);
        if (!snap)
          continue;
        auto line = describe_progress(*snap);
        if (line != m.last_line) {
          std::cout << "[" << std::fixed << std::setprecision(2) << std::setw(6) << elapsed << "s] "
                    << std::left << std::setw(16) << m.label << line << std::endl;
          m.last_line = line;
        }
        if (settled(snap->request_state)) {
          m.settled = true;
          --remaining;
        }
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }

  bool as_expected = true;
  std::cout << "\ndemo: summary\n";
  db::in_transaction(*conn, [&](pqxx::transaction_base& tx) {
    for (auto& m : movements) {
      auto snap = db::load_request(tx, m.id);
      bool ok = snap && snap->request_state == m.expected_state;
      auto state = snap ? domain::to_string(snap->request_state) : std::string_view("?");
      as_expected &= ok;
      std::cout << "  " << std::left << std::setw(16) << m.label << std::setw(22) << state
                << (ok ? "as expected"
                       : "EXPECTED " + std::string(domain::to_string(m.expected_state)))
                << "\n";
      if (snap && m.template_key == "evm_native_transfer")
        for (auto& n : snap->nodes)
          std::cout << "  " << std::setw(16) << ""
                    << "tx " << n.provider_refs << "\n";
    }
  });
  int code = stop_runtime(self, rt);
  std::cout << (as_expected ? "demo: every movement settled as expected" : "demo: FAILED")
            << std::endl;
  return as_expected && code == 0 ? 0 : 1;
}

} // namespace mg::app
