// movegate bench: N movements of one shape on the zero-latency sim, every
// step durable. Reports throughput (all approved at once), latency (paced
// approvals on an idle runtime) and, for comparison, latency with wake-ups
// off at the reference intervals, and the process's memory (the runtime
// runs in it) after each phase.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include "actors/system_config.hpp"
#include "app/common.hpp"
#include "executors/sim.hpp"
#include "persistence/db.hpp"
#include "persistence/migrate.hpp"

namespace mg::app {

namespace {

using clock_type = std::chrono::steady_clock;

/// This process's resident memory, MiB: now (VmRSS) and its peak (VmHWM).
struct memory_use {
  double rss_mib = 0;
  double peak_mib = 0;
};

memory_use current_memory() {
  memory_use m;
  std::ifstream status("/proc/self/status");
  std::string key;
  double kib = 0;
  std::string unit;
  while (status >> key) {
    if (key == "VmRSS:" && status >> kib >> unit)
      m.rss_mib = kib / 1024;
    else if (key == "VmHWM:" && status >> kib >> unit)
      m.peak_mib = kib / 1024;
  }
  return m;
}

struct percentiles {
  double p50 = 0, p99 = 0;
  long samples = 0;
};

struct phase_result {
  long movements = 0;
  long completed = 0;
  double seconds = 0;
  double movements_per_s = 0;
  double nodes_per_s = 0;
  percentiles approve_to_first_submit;
  percentiles hop;
  memory_use memory; // when the phase had settled
};

struct bench_options {
  int movements = 2000;
  std::string shape = "chain4";
  int latency_movements = 200;
  int pace_ms = 25; // between approvals in the latency phase (≈ 40 movements/s)
  int compare_movements = 20;
  double compare_cap_seconds = 90;
  bool json = false;
  bool compare = true;
  int nodes_per_movement = 0; // from the template
};

void progress(const std::string& line) {
  std::cerr << "bench: " << line << std::endl;
}

percentiles read_percentiles(pqxx::work& tx, const std::string& sql, const std::string& prefix) {
  auto r = tx.exec_params("SELECT COALESCE(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), 0),"
                          " COALESCE(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms), 0),"
                          " count(*) FROM (" +
                              sql + ") AS samples(ms)",
                          prefix);
  return {r[0][0].as<double>(), r[0][1].as<double>(), r[0][2].as<long>()};
}

/// Latencies from what the database recorded: approval event → first
/// accepted submit in the sim ledger; last predecessor's COMPLETED event →
/// the successor's accepted submit.
void measure_latency(pqxx::connection& c, const std::string& prefix, phase_result& out) {
  pqxx::work tx(c);
  out.approve_to_first_submit = read_percentiles(
      tx,
      "SELECT extract(epoch FROM min(l.accepted_at) - min(e.occurred_at)) * 1000"
      " FROM movement_requests r"
      " JOIN movement_events e ON e.request_id = r.id AND e.event_type = 'request_approved'"
      " JOIN movement_request_nodes n ON n.request_id = r.id"
      " JOIN sim_ledger l ON l.node_id = n.id AND NOT l.fenced"
      " WHERE r.idempotency_key LIKE $1 GROUP BY r.id",
      prefix);
  out.hop = read_percentiles(
      tx,
      "SELECT extract(epoch FROM min(l.accepted_at) - max(e.occurred_at)) * 1000"
      " FROM movement_requests r"
      " JOIN template_edges te ON te.template_key = r.template_key"
      "  AND te.version = r.template_version"
      " JOIN movement_events e ON e.request_id = r.id AND e.node_key = te.from_key"
      "  AND e.event_type = 'node_state_changed' AND e.payload->>'node_state' = 'COMPLETED'"
      " JOIN movement_request_nodes n ON n.request_id = r.id AND n.node_key = te.to_key"
      " JOIN sim_ledger l ON l.node_id = n.id AND NOT l.fenced"
      " WHERE r.idempotency_key LIKE $1 GROUP BY r.id, te.to_key",
      prefix);
  tx.commit();
}

void measure_throughput(pqxx::connection& c, const std::string& prefix, int nodes_per_movement,
                        phase_result& out) {
  pqxx::work tx(c);
  auto r = tx.exec_params("SELECT count(*) FILTER (WHERE r.request_state = 'COMPLETED'),"
                          " extract(epoch FROM max(r.updated_at) - min(e.occurred_at))"
                          " FROM movement_requests r JOIN movement_events e ON e.request_id = r.id"
                          "  AND e.event_type = 'request_approved' WHERE r.idempotency_key LIKE $1",
                          prefix);
  tx.commit();
  out.completed = r[0][0].as<long>();
  out.seconds = r[0][1].is_null() ? 0 : r[0][1].as<double>();
  if (out.seconds > 0) {
    out.movements_per_s = out.completed / out.seconds;
    out.nodes_per_s = out.completed * nodes_per_movement / out.seconds;
  }
}

std::vector<std::string> create_movements(pqxx::connection& c, actors::runtime& rt,
                                          const std::string& template_key,
                                          const std::string& prefix, int n) {
  std::vector<std::string> ids;
  constexpr int batch = 250;
  for (int i = 0; i < n; i += batch) {
    pqxx::work tx(c);
    for (int j = i; j < std::min(n, i + batch); ++j) {
      db::create_params p;
      p.template_key = template_key;
      p.intent = R"({"asset": "USDC", "amount": "1.00"})";
      p.idempotency_key = prefix + std::to_string(j);
      p.created_by = "bench";
      p.network_class = rt.settings().network_class;
      ids.push_back(db::create_request(tx, rt.plans(), p, rt.settings().callback_max_attempts).id);
    }
    tx.commit();
  }
  // A fresh table grows from empty faster than autovacuum re-analyzes it;
  // stale statistics would give the claim queries a poor generic plan.
  pqxx::nontransaction tx(c);
  tx.exec("ANALYZE movement_requests, movement_request_nodes");
  return ids;
}

void approve(pqxx::connection& c, actors::runtime& rt, const std::string& id) {
  pqxx::work tx(c);
  db::approve_request(tx, rt.plans(), id, "bench-approver", rt.engine().reconcile_settings());
  tx.commit();
  rt.notify_changed(id);
}

long count_settled(pqxx::connection& c, const std::string& prefix) {
  pqxx::work tx(c);
  auto r = tx.exec_params("SELECT count(*) FROM movement_requests WHERE idempotency_key LIKE $1"
                          " AND request_state IN ('COMPLETED', 'FAILED', 'MANUAL_INTERVENTION')",
                          prefix);
  tx.commit();
  return r[0][0].as<long>();
}

void wait_settled(pqxx::connection& c, const std::string& prefix, long n, double cap_seconds,
                  const std::string& what) {
  auto start = clock_type::now();
  auto last_report = start;
  for (;;) {
    long done = count_settled(c, prefix);
    auto now = clock_type::now();
    double elapsed = std::chrono::duration<double>(now - start).count();
    if (done >= n || elapsed > cap_seconds) {
      progress(what + ": " + std::to_string(done) + "/" + std::to_string(n) + " settled in " +
               std::to_string(elapsed).substr(0, 6) + " s");
      return;
    }
    if (now - last_report > std::chrono::seconds(1)) {
      progress(what + ": " + std::to_string(done) + "/" + std::to_string(n) + " settled");
      last_report = now;
    }
    // The count scans every request of the run: poll gently, the figures
    // come from database timestamps anyway.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

/// Runs `body` with a fresh in-process runtime, then stops it.
template <class F> void with_runtime(const config::settings& s, F body) {
  caf::actor_system_config cfg;
  actors::configure(cfg);
  caf::actor_system sys{cfg};
  actors::runtime rt(sys, s, executors::builtin_providers(s.database_url));
  caf::scoped_actor self{sys};
  rt.start(caf::actor_cast<caf::actor>(self));
  body(rt);
  rt.shutdown();
  self->receive([](actors::done_atom, int) {}, caf::after(std::chrono::seconds(30)) >> [] {});
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

void print_table(const bench_options& o, const phase_result& t, const phase_result& l,
                 const phase_result* off) {
  std::printf("movegate bench — shape %s, %d movements x %d nodes, sim zero latency\n",
              o.shape.c_str(), o.movements, o.nodes_per_movement);
  std::printf("%-44s %12s\n", "metric", "value");
  std::printf("%-44s %12s\n", "throughput: movements/s", fmt(t.movements_per_s).c_str());
  std::printf("%-44s %12s\n", "throughput: nodes/s", fmt(t.nodes_per_s).c_str());
  std::printf("%-44s %12s\n", "throughput: completed / wall s",
              (std::to_string(t.completed) + " / " + fmt(t.seconds)).c_str());
  std::printf("%-44s %12s\n", "memory: RSS after throughput (MiB)", fmt(t.memory.rss_mib).c_str());
  std::printf("%-44s %12s\n", "memory: RSS after latency (MiB)", fmt(l.memory.rss_mib).c_str());
  std::printf("%-44s %12s\n", "memory: peak RSS (MiB)", fmt(l.memory.peak_mib).c_str());
  auto row = [](const char* name, const percentiles& p) {
    std::printf("%-44s %12s %12s %8ld\n", name, fmt(p.p50).c_str(), fmt(p.p99).c_str(), p.samples);
  };
  std::printf("\n%-44s %12s %12s %8s\n", "latency (ms)", "p50", "p99", "samples");
  std::printf("(wake-ups on: %d movements approved one every %d ms; wake-ups off: %d approved at"
              " once, reference intervals, capped at %.0f s)\n",
              o.latency_movements, o.pace_ms, o.compare_movements, o.compare_cap_seconds);
  row("wake-ups on: approve -> first submit", l.approve_to_first_submit);
  row("wake-ups on: completion -> successor submit", l.hop);
  if (off) {
    row("wake-ups off: approve -> first submit", off->approve_to_first_submit);
    row("wake-ups off: completion -> successor submit", off->hop);
  }
}

std::string pjson(const percentiles& p) {
  return "{\"p50\":" + fmt(p.p50) + ",\"p99\":" + fmt(p.p99) +
         ",\"samples\":" + std::to_string(p.samples) + "}";
}

void print_json(const bench_options& o, const phase_result& t, const phase_result& l,
                const phase_result* off) {
  std::string out =
      "{\"shape\":\"" + o.shape + "\",\"movements\":" + std::to_string(o.movements) +
      ",\"completed\":" + std::to_string(t.completed) + ",\"seconds\":" + fmt(t.seconds) +
      ",\"movements_per_s\":" + fmt(t.movements_per_s) + ",\"nodes_per_s\":" + fmt(t.nodes_per_s) +
      ",\"approve_to_first_submit_ms\":" + pjson(l.approve_to_first_submit) +
      ",\"hop_ms\":" + pjson(l.hop) +
      ",\"memory_mib\":{\"after_throughput\":" + fmt(t.memory.rss_mib) +
      ",\"after_latency\":" + fmt(l.memory.rss_mib) + ",\"peak\":" + fmt(l.memory.peak_mib) + "}";
  if (off)
    out +=
        ",\"wakeups_off\":{\"approve_to_first_submit_ms\":" + pjson(off->approve_to_first_submit) +
        ",\"hop_ms\":" + pjson(off->hop) + "}";
  std::cout << out << "}" << std::endl;
}

} // namespace

int cmd_bench(const args& a) {
  auto s = load_settings_or_exit();
  bench_options o;
  o.movements = std::stoi(flag(a, "--movements", "2000"));
  o.shape = flag(a, "--shape", "chain4");
  o.latency_movements = std::stoi(flag(a, "--latency-movements", "200"));
  o.pace_ms = std::stoi(flag(a, "--pace-ms", "25"));
  o.compare_movements = std::stoi(flag(a, "--compare-movements", "20"));
  o.json = has_flag(a, "--json");
  o.compare = !has_flag(a, "--no-compare");
  std::string template_key = "bench_" + o.shape;
  progress("migrating and loading templates");
  db::migrate(s.database_url, db::bundled_migrations());
  load_templates(s.database_url, default_templates_dir(), false);
  auto conn = db::connect(s.database_url);
  auto run = std::to_string(std::chrono::system_clock::now().time_since_epoch().count());

  phase_result throughput, latency, off;
  s.wakeups_enabled = true;
  with_runtime(s, [&](actors::runtime& rt) {
    {
      pqxx::work tx(*conn);
      o.nodes_per_movement =
          static_cast<int>(rt.plans()
                               .get(tx, template_key, db::latest_template_version(tx, template_key))
                               ->plan.nodes.size());
    }
    auto prefix = "bench-" + run + "-t-";
    progress("creating " + std::to_string(o.movements) + " " + o.shape + " movements");
    auto ids = create_movements(*conn, rt, template_key, prefix, o.movements);
    progress("approving all at once");
    for (auto& id : ids)
      approve(*conn, rt, id);
    wait_settled(*conn, prefix + "%", o.movements, 600, "throughput");
    measure_throughput(*conn, prefix + "%", o.nodes_per_movement, throughput);
    throughput.memory = current_memory();

    auto lprefix = "bench-" + run + "-l-";
    progress("latency: " + std::to_string(o.latency_movements) + " approvals, one every " +
             std::to_string(o.pace_ms) + " ms");
    auto lids = create_movements(*conn, rt, template_key, lprefix, o.latency_movements);
    for (auto& id : lids) {
      approve(*conn, rt, id);
      std::this_thread::sleep_for(std::chrono::milliseconds(o.pace_ms));
    }
    wait_settled(*conn, lprefix + "%", o.latency_movements, 120, "latency");
    measure_latency(*conn, lprefix + "%", latency);
    latency.memory = current_memory();
  });
  if (o.compare) {
    auto cs = s;
    cs.wakeups_enabled = false;
    with_runtime(cs, [&](actors::runtime& rt) {
      auto prefix = "bench-" + run + "-off-";
      progress("wake-ups off (reference timing): " + std::to_string(o.compare_movements) +
               " movements, latency only, capped at " + fmt(o.compare_cap_seconds) + " s");
      auto ids = create_movements(*conn, rt, template_key, prefix, o.compare_movements);
      for (auto& id : ids)
        approve(*conn, rt, id);
      wait_settled(*conn, prefix + "%", o.compare_movements, o.compare_cap_seconds, "wake-ups off");
      measure_latency(*conn, prefix + "%", off);
    });
  }
  if (o.json)
    print_json(o, throughput, latency, o.compare ? &off : nullptr);
  else
    print_table(o, throughput, latency, o.compare ? &off : nullptr);
  return throughput.completed == o.movements ? 0 : 1;
}

} // namespace mg::app
