#!/usr/bin/env bash
# The rounds of `scripts/bench.sh --peers`, run by scripts/with-pg.sh (which
# exports MG_PG_PORT and MG_PG_BIN). bench.sh exports MG_BENCH_ROUNDS,
# MG_BENCH_WORK (the peer harness), MG_BENCH_RESULTS and MG_BENCH_MOVEGATE.
# Arguments go to `movegate bench`.
set -euo pipefail

rounds=$MG_BENCH_ROUNDS
results=$MG_BENCH_RESULTS
bin=$MG_BENCH_MOVEGATE
pg_bin=${MG_PG_BIN:-/usr/lib/postgresql/15/bin}
export PGHOST=127.0.0.1 PGPORT=$MG_PG_PORT PGUSER=postgres

say() { echo "[bench --peers] $*" >&2; }

for round in $(seq 1 "$rounds"); do
  db=mg_bench_r$round
  say "round $round/$rounds: movegate bench (database $db)"
  "$pg_bin/dropdb" --if-exists "$db" >/dev/null 2>&1 || true
  "$pg_bin/createdb" "$db"
  "$pg_bin/psql" -X -q -d postgres -c "CHECKPOINT" >/dev/null
  url="postgresql://postgres@127.0.0.1:$MG_PG_PORT/$db"
  MG_DATABASE_URL=$url "$bin" migrate >/dev/null
  rc=0
  MG_DATABASE_URL=$url "$bin" bench --json --no-compare "$@" >"$results/round$round.movegate.json" ||
    rc=$?
  say "round $round/$rounds: movegate bench exited $rc: $(cat "$results/round$round.movegate.json")"
  "$pg_bin/dropdb" --if-exists "$db" >/dev/null 2>&1 || true

  say "round $round/$rounds: graphile-worker chain4 + latency (peer harness)"
  before=$(ls "$MG_BENCH_WORK/results"/*.jsonl 2>/dev/null || true)
  RUNS=1 LIBS=graphile-worker WORKLOADS="chain4 latency" PGBENCH=0 PGBIN=$pg_bin \
    DB_PREFIX=mgpeer bash "$MG_BENCH_WORK/run.sh" >&2 || say "round $round: the peer harness failed"
  after=$(ls "$MG_BENCH_WORK/results"/*.jsonl 2>/dev/null || true)
  new=$(comm -13 <(echo "$before") <(echo "$after") | tail -n 1)
  if [[ -n $new ]]; then
    cp "$new" "$results/round$round.peers.jsonl"
  else
    say "round $round: no peer results file"
    : >"$results/round$round.peers.jsonl"
  fi
done

python3 - "$results" "$rounds" <<'PY'
import json, statistics, sys, os
results, rounds = sys.argv[1], int(sys.argv[2])

def load_mg(i):
    try:
        with open(os.path.join(results, f"round{i}.movegate.json")) as f:
            lines = [l for l in f.read().splitlines() if l.startswith("{")]
        return json.loads(lines[-1]) if lines else None
    except (OSError, ValueError):
        return None

def load_peer(i):
    out = {}
    try:
        with open(os.path.join(results, f"round{i}.peers.jsonl")) as f:
            for line in f:
                r = json.loads(line)
                if r.get("type") == "bench" and r.get("ok"):
                    out[r["workload"]] = r
    except (OSError, ValueError):
        pass
    return out

rows = []
for i in range(1, rounds + 1):
    m, p = load_mg(i), load_peer(i)
    rows.append({
        "round": i,
        "nodes_per_s": m and m["nodes_per_s"],
        "hop_p50": m and m["hop_ms"]["p50"],
        "hop_p99": m and m["hop_ms"]["p99"],
        "approve_p50": m and m["approve_to_first_submit_ms"]["p50"],
        "wal_sync_per_node": m and m.get("wal_sync_per_node"),
        "xact_commit_per_node": m and m.get("xact_commit_per_node"),
        "hot_share": m and m.get("hot_share"),
        "gw_steps_per_s": p.get("chain4", {}).get("steps_per_s"),
        "gw_w3_p50": p.get("latency", {}).get("latency", {}).get("p50_ms"),
        "gw_w3_p99": p.get("latency", {}).get("latency", {}).get("p99_ms"),
    })

cols = ["nodes_per_s", "hop_p50", "hop_p99", "approve_p50", "wal_sync_per_node",
        "xact_commit_per_node", "hot_share", "gw_steps_per_s", "gw_w3_p50", "gw_w3_p99"]
def cell(v):
    return "-" if v is None else (f"{v:.3f}" if isinstance(v, float) and abs(v) < 10 else f"{v:.1f}" if isinstance(v, float) else str(v))
print("\nmovegate bench vs graphile-worker 0.18, one PostgreSQL server, rounds alternating")
print(f"{'round':<8}" + "".join(f"{c:>21}" for c in cols))
for r in rows:
    print(f"{r['round']:<8}" + "".join(f"{cell(r[c]):>21}" for c in cols))
med = {}
for c in cols:
    vals = [float(r[c]) for r in rows if r[c] is not None]
    med[c] = statistics.median(vals) if vals else None
print(f"{'median':<8}" + "".join(f"{cell(med[c]):>21}" for c in cols))

def ratio(a, b):
    return None if a is None or not b else a / b
ratios = {
    "throughput (nodes/s / graphile chain4 steps/s; goal >= 1.5)": ratio(med["nodes_per_s"], med["gw_steps_per_s"]),
    "hop p50 / graphile W3 p50 (goal <= 0.4)": ratio(med["hop_p50"], med["gw_w3_p50"]),
    "hop p99 / graphile W3 p99 (goal <= 1)": ratio(med["hop_p99"], med["gw_w3_p99"]),
    "approve->first submit p50 / graphile W3 p50 (goal <= 0.6)": ratio(med["approve_p50"], med["gw_w3_p50"]),
}
print("\nratios of the medians")
for k, v in ratios.items():
    print(f"  {k:<62} {cell(v)}")
summary = {"rounds": rows, "medians": med, "ratios": ratios}
with open(os.path.join(results, "summary.json"), "w") as f:
    json.dump(summary, f, indent=1)
print(f"\nraw results: {results}")
ok = all(r["nodes_per_s"] is not None and r["gw_steps_per_s"] is not None for r in rows)
sys.exit(0 if ok else 1)
PY
