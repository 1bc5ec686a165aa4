// movegate bench: N movements of one shape on the zero-latency sim, every
// step durable. Reports throughput (a backlog approved before its runtime
// starts, timed from the start as the peer harness times its pre-enqueued
// jobs; or approved one by one while it runs), latency (paced approvals on
// an idle runtime) and, for comparison, latency with wake-ups off at the
// reference intervals, and the process's memory (the runtime runs in it)
// after each phase.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <malloc.h>
#include <thread>

#include "actors/system_config.hpp"
#include "app/bench_actor_memory.hpp"
#include "app/common.hpp"
#include "domain/json_writer.hpp"
#include "executors/sim.hpp"
#include "persistence/bench_store.hpp"
#include "persistence/db.hpp"
#include "persistence/migrate.hpp"
#include "persistence/transaction.hpp"

namespace mg::app {

namespace {

using clock_type = std::chrono::steady_clock;

using percentiles = db::bench_percentiles;

/// Per node of the throughput phase, from the server's counters.
struct server_costs {
  double wal_sync_per_node = 0;
  double xact_commit_per_node = 0;
  double hot_share = 0; // HOT updates / updates of movement_request_nodes
  long node_updates = 0;
  bool exact = true; // every other backend had exited when the counters were read
};

struct phase_result {
  long movements = 0;
  long completed = 0;
  double seconds = 0;
  double movements_per_s = 0;
  double nodes_per_s = 0;
  double approvals_per_s = 0; // a backlog's approvals, before its runtime started
  percentiles approve_to_first_submit;
  percentiles hop;
  memory_use memory; // when the phase had settled
  server_costs costs;
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
  // The throughput phase's approvals run one by one while the runtime
  // works (and count in its time and costs), instead of before it starts.
  bool approve_while_running = false;
  int nodes_per_movement = 0; // from the template
};

void progress(const std::string& line) {
  std::cerr << "bench: " << line << std::endl;
}

/// Latencies from what the database recorded (see persistence/bench_store).
void measure_latency(pqxx::connection& c, const std::string& prefix, phase_result& out) {
  pqxx::read_transaction tx(c);
  out.approve_to_first_submit = db::bench_approve_to_first_submit(tx, prefix);
  out.hop = db::bench_hop(tx, prefix);
  tx.abort();
}

/// `started_at`: when the runtime started (database clock), or empty to
/// time from the first approval.
void measure_throughput(pqxx::connection& c, const std::string& prefix, int nodes_per_movement,
                        const std::string& started_at, phase_result& out) {
  pqxx::read_transaction tx(c);
  auto t = db::bench_read_throughput(tx, prefix, started_at);
  tx.abort();
  out.completed = t.completed;
  out.seconds = t.seconds;
  if (out.seconds > 0) {
    out.movements_per_s = out.completed / out.seconds;
    out.nodes_per_s = out.completed * nodes_per_movement / out.seconds;
  }
}

server_costs costs_between(const db::server_counters& a, const db::server_counters& b, long nodes,
                           bool exact) {
  server_costs out;
  out.exact = exact;
  out.node_updates = b.node_updates - a.node_updates;
  if (nodes > 0) {
    out.wal_sync_per_node = double(b.wal_sync - a.wal_sync) / nodes;
    out.xact_commit_per_node = double(b.xact_commit - a.xact_commit) / nodes;
  }
  if (out.node_updates > 0)
    out.hot_share = double(b.node_hot_updates - a.node_hot_updates) / out.node_updates;
  return out;
}

/// Live movement actors kept at once to weigh one.
constexpr int movement_actor_sample = 20000;

constexpr int backlog_ttl_seconds = 24 * 3600;

std::vector<std::string> create_movements(pqxx::connection& c, actors::runtime& rt,
                                          const std::string& template_key,
                                          const std::string& prefix, int n) {
  std::vector<std::string> ids;
  constexpr int batch = 250;
  for (int i = 0; i < n; i += batch) {
    db::committed(c, [&](pqxx::transaction_base& tx) {
      for (int j = i; j < std::min(n, i + batch); ++j) {
        db::create_params p;
        p.template_key = template_key;
        p.intent = R"({"asset": "USDC", "amount": "1.00"})";
        p.idempotency_key = prefix + std::to_string(j);
        p.created_by = "bench";
        p.network_class = rt.settings().network_class;
        // A backlog is approved one by one after all of it was created: it
        // must not expire on the way (the default TTL is 5 minutes).
        p.approval_ttl_seconds = backlog_ttl_seconds;
        ids.push_back(
            db::create_request(tx, rt.plans(), p, rt.settings().callback_max_attempts).id);
      }
    });
  }
  db::analyze_movement_tables(c);
  return ids;
}

/// Approves `ids` before the runtime starts, many per transaction (nothing
/// works on them yet, so nothing waits for a lock); returns approvals/s.
double approve_backlog(pqxx::connection& c, actors::runtime& rt,
                       const std::vector<std::string>& ids) {
  constexpr size_t batch = 250;
  auto start = clock_type::now();
  auto last_report = start;
  for (size_t i = 0; i < ids.size(); i += batch) {
    db::committed(c, [&](pqxx::transaction_base& tx) {
      for (size_t j = i; j < std::min(ids.size(), i + batch); ++j)
        db::approve_request(tx, rt.plans(), ids[j], "bench-approver",
                            rt.engine().reconcile_settings());
    });
    if (clock_type::now() - last_report > std::chrono::seconds(1)) {
      progress("approving the backlog: " + std::to_string(std::min(ids.size(), i + batch)) + "/" +
               std::to_string(ids.size()));
      last_report = clock_type::now();
    }
  }
  double seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  return seconds > 0 ? ids.size() / seconds : 0;
}

/// As the API approves: reconciled in its transaction, announced in-process.
void approve(pqxx::connection& c, actors::runtime& rt, const std::string& id) {
  db::approve_result r;
  db::committed(c, [&](pqxx::transaction_base& tx) {
    r = db::approve_request(tx, rt.plans(), id, "bench-approver", rt.engine().reconcile_settings());
  });
  rt.notify_changed(id, {true, r.reconciled.activated});
}

/// Rolled back, so the bench's own polling adds nothing to xact_commit.
long count_settled(pqxx::connection& c, const std::string& prefix) {
  pqxx::read_transaction tx(c);
  long n = db::bench_count_settled(tx, prefix);
  tx.abort();
  return n;
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
    // The count scans every request of the run: poll gently (about 1 ms
    // between polls per 100 requests, at least 100 ms), the figures come
    // from database timestamps anyway.
    std::this_thread::sleep_for(std::chrono::milliseconds(std::max(100L, n / 100)));
  }
}

/// Runs `before_start` with a fresh in-process runtime, starts it, runs
/// `body`, then stops it.
template <class Before, class F>
void with_runtime(const config::settings& s, Before before_start, F body) {
  caf::actor_system_config cfg;
  actors::configure(cfg);
  caf::actor_system sys{cfg};
  actors::runtime rt(sys, s, executors::builtin_providers(s.database_url));
  caf::scoped_actor self{sys};
  before_start(rt);
  rt.start(caf::actor_cast<caf::actor>(self));
  body(rt);
  rt.shutdown();
  self->receive([](actors::done_atom, int) {}, caf::after(std::chrono::seconds(30)) >> [] {});
}

template <class F> void with_runtime(const config::settings& s, F body) {
  with_runtime(
      s, [](actors::runtime&) {}, body);
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string fmt3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

void print_table(const bench_options& o, const phase_result& t, const phase_result& l,
                 const phase_result* off, const actor_memory& actors) {
  std::printf("movegate bench — shape %s, %d movements x %d nodes, sim zero latency\n",
              o.shape.c_str(), o.movements, o.nodes_per_movement);
  std::printf("%-44s %12s\n", "metric", "value");
  if (o.approve_while_running)
    std::printf("(throughput: approved one by one while the runtime worked, timed from the first"
                " approval)\n");
  else
    std::printf("(throughput: a backlog approved at %s/s before the runtime started, timed from"
                " its start)\n",
                fmt(t.approvals_per_s).c_str());
  std::printf("%-44s %12s\n", "throughput: movements/s", fmt(t.movements_per_s).c_str());
  std::printf("%-44s %12s\n", "throughput: nodes/s", fmt(t.nodes_per_s).c_str());
  std::printf("%-44s %12s\n", "throughput: completed / wall s",
              (std::to_string(t.completed) + " / " + fmt(t.seconds)).c_str());
  std::printf("%-44s %12s\n", "throughput: WAL flushes (wal_sync) / node",
              fmt3(t.costs.wal_sync_per_node).c_str());
  std::printf("%-44s %12s\n", "throughput: xact_commit / node",
              fmt3(t.costs.xact_commit_per_node).c_str());
  std::printf("%-44s %12s\n", "throughput: HOT share of node updates",
              fmt3(t.costs.hot_share).c_str());
  std::printf("%-44s %12ld\n", "throughput: node updates", t.costs.node_updates);
  if (!t.costs.exact)
    std::printf("(a backend of the phase was still connected: the counters may miss its last"
                " second)\n");
  std::printf("%-44s %12s\n", "memory: RSS after throughput (MiB)", fmt(t.memory.rss_mib).c_str());
  std::printf("%-44s %12s\n", "memory: RSS after latency (MiB)", fmt(l.memory.rss_mib).c_str());
  std::printf("%-44s %12s\n", "memory: peak RSS (MiB)", fmt(l.memory.peak_mib).c_str());
  std::printf("%-44s %12s\n", "memory: per live movement actor (bytes)",
              fmt(actors.bytes_per_actor).c_str());
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

void percentiles_json(json::writer& w, const char* name, const percentiles& p) {
  w.key(name).begin_object();
  w.key("p50").raw(fmt(p.p50)).key("p99").raw(fmt(p.p99)).member("samples", int64_t(p.samples));
  w.end_object();
}

void print_json(const bench_options& o, const phase_result& t, const phase_result& l,
                const phase_result* off, const actor_memory& actors) {
  json::writer w;
  w.begin_object();
  w.member("shape", o.shape).member("movements", o.movements);
  w.member("completed", int64_t(t.completed)).key("seconds").raw(fmt(t.seconds));
  w.member("approved", o.approve_while_running ? "while_running" : "before_start");
  w.key("approvals_per_s").raw(fmt(t.approvals_per_s));
  w.key("movements_per_s").raw(fmt(t.movements_per_s)).key("nodes_per_s").raw(fmt(t.nodes_per_s));
  percentiles_json(w, "approve_to_first_submit_ms", l.approve_to_first_submit);
  percentiles_json(w, "hop_ms", l.hop);
  w.key("wal_sync_per_node").raw(fmt3(t.costs.wal_sync_per_node));
  w.key("xact_commit_per_node").raw(fmt3(t.costs.xact_commit_per_node));
  w.key("hot_share").raw(fmt3(t.costs.hot_share));
  w.member("node_updates", int64_t(t.costs.node_updates)).member("counters_exact", t.costs.exact);
  w.key("memory_mib").begin_object();
  w.key("after_throughput").raw(fmt(t.memory.rss_mib));
  w.key("after_latency").raw(fmt(l.memory.rss_mib)).key("peak").raw(fmt(l.memory.peak_mib));
  w.end_object();
  w.key("movement_actor_memory").begin_object();
  w.member("actors", actors.actors).key("bytes_per_actor").raw(fmt(actors.bytes_per_actor));
  w.end_object();
  if (off) {
    w.key("wakeups_off").begin_object();
    percentiles_json(w, "approve_to_first_submit_ms", off->approve_to_first_submit);
    percentiles_json(w, "hop_ms", off->hop);
    w.end_object();
  }
  w.end_object();
  std::cout << w.str() << std::endl;
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
  o.approve_while_running = has_flag(a, "--approve-while-running");
  std::string template_key = "bench_" + o.shape;
  // First, while this process has freed nothing malloc could hand back out.
  progress("movement actor memory: " + std::to_string(movement_actor_sample) + " live actors");
  auto actors = measure_movement_actor_memory(movement_actor_sample);
  // What they held goes back to the system, so the phases' memory figures
  // are the runtime's own.
  malloc_trim(0);
  progress("migrating and loading templates");
  db::migrate(s.database_url, db::bundled_migrations());
  load_templates(s.database_url, default_templates_dir(), false);
  // Approves as this process's API does (its NOTIFYs are its own).
  auto conn = db::connect(db::with_application_name(s.database_url, db::api_application_name()));
  auto run = std::to_string(std::chrono::system_clock::now().time_since_epoch().count());

  phase_result throughput, latency, off;
  s.wakeups_enabled = true;
  db::server_counters before;
  auto present_before = db::other_client_backends(*conn);
  // The throughput phase has a runtime of its own: once it has stopped and
  // its backends have exited, the server's counters hold all of its work.
  const auto prefix = "bench-" + run + "-t-";
  std::vector<std::string> ids;
  std::string started_at; // empty: timed from the first approval
  auto prepare = [&](actors::runtime& rt) {
    {
      pqxx::read_transaction tx(*conn);
      o.nodes_per_movement =
          static_cast<int>(rt.plans()
                               .get(tx, template_key, db::latest_template_version(tx, template_key))
                               ->plan.nodes.size());
      tx.abort();
    }
    progress("creating " + std::to_string(o.movements) + " " + o.shape + " movements");
    ids = create_movements(*conn, rt, template_key, prefix, o.movements);
    if (!o.approve_while_running) {
      // Like the peer harness's jobs, enqueued before its workers start.
      throughput.approvals_per_s = approve_backlog(*conn, rt, ids);
      started_at = db::bench_clock(*conn);
    }
    before = db::read_server_counters(*conn);
  };
  with_runtime(s, prepare, [&](actors::runtime& rt) {
    if (o.approve_while_running) {
      progress("approving all, one by one, while the runtime works");
      for (auto& id : ids)
        approve(*conn, rt, id);
    }
    // At least 10 minutes, and 10 ms per node for a large backlog.
    wait_settled(*conn, prefix + "%", o.movements,
                 std::max(600, o.movements * o.nodes_per_movement / 100), "throughput");
    measure_throughput(*conn, prefix + "%", o.nodes_per_movement, started_at, throughput);
    throughput.memory = current_memory();
  });
  {
    progress("throughput: reading the server's counters");
    bool exact = db::wait_other_backends_gone(*conn, present_before, 30);
    auto after = db::read_server_counters(*conn);
    throughput.costs =
        costs_between(before, after, throughput.completed * long(o.nodes_per_movement), exact);
  }
  with_runtime(s, [&](actors::runtime& rt) {
    auto lprefix = "bench-" + run + "-l-";
    progress("latency: " + std::to_string(o.latency_movements) + " approvals, one every " +
             std::to_string(o.pace_ms) + " ms");
    auto lids = create_movements(*conn, rt, template_key, lprefix, o.latency_movements);
    for (size_t i = 0; i < lids.size(); ++i) {
      approve(*conn, rt, lids[i]);
      if ((i + 1) % 50 == 0)
        progress("latency: " + std::to_string(i + 1) + "/" + std::to_string(lids.size()) +
                 " approved");
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
    print_json(o, throughput, latency, o.compare ? &off : nullptr, actors);
  else
    print_table(o, throughput, latency, o.compare ? &off : nullptr, actors);
  return throughput.completed == o.movements ? 0 : 1;
}

} // namespace mg::app
