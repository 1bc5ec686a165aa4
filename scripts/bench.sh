#!/usr/bin/env bash
# Usage:
#   scripts/bench.sh [BENCH ARGS...]          movegate bench on a throwaway PostgreSQL
#   scripts/bench.sh --peers [BENCH ARGS...]  movegate bench and graphile-worker 0.18
#                                             side by side on one throwaway PostgreSQL
#
# Installs dependencies, builds, and runs `movegate bench` (extra arguments go
# to it). With --peers, one PostgreSQL server runs ROUNDS (default 3) rounds
# of: `movegate bench --json` (chain4, 2000 movements unless the arguments say
# otherwise; --no-compare added) in a fresh database, then the peer harness
# (../shared/bench/peers/run.sh: graphile-worker 0.18, workloads chain4 and
# latency). It prints every round, the medians and the ratios:
#   throughput = movegate nodes/s / graphile chain4 steps/s
#   hop        = movegate hop p50 / graphile W3 enqueue->start p50
#   approve    = movegate approve->first submit p50 / graphile W3 p50
#
# Environment: ROUNDS (3), PEERS_DIR (the harness, default
# ../shared/bench/peers beside the checkout), MG_BENCH_BIN (a prebuilt
# movegate binary: skips install and build), MG_BENCH_OUT (where the raw
# results go, default build/bench-peers/<UTC stamp>).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)

peers=0
if [[ ${1:-} == --peers ]]; then
  peers=1
  shift
fi

bin=${MG_BENCH_BIN:-}
if [[ -z $bin ]]; then
  bash scripts/install-deps.sh
  bash scripts/build.sh
  bin=$root/build/movegate
fi
bin=$(realpath "$bin")

if ((!peers)); then
  echo "[bench] migrating and running the benchmark"
  # shellcheck disable=SC2016 # $@ is expanded by the inner shell.
  exec bash scripts/with-pg.sh \
    bash -c '"$0" migrate && "$0" bench "$@"' "$bin" "$@"
fi

peers_src=${PEERS_DIR:-$root/../shared/bench/peers}
if [[ ! -f $peers_src/run.sh ]]; then
  # A worktree sits one level deeper than a checkout: /work/wt/<name>.
  for candidate in "$root/../../shared/bench/peers" /work/shared/bench/peers; do
    if [[ -f $candidate/run.sh ]]; then
      peers_src=$candidate
      break
    fi
  done
fi
[[ -f $peers_src/run.sh ]] || {
  echo "[bench] no peer harness at $peers_src (set PEERS_DIR)" >&2
  exit 1
}
command -v node >/dev/null || {
  echo "[bench] node is needed for the peer harness (scripts/install-deps.sh installs it)" >&2
  exit 1
}

out=${MG_BENCH_OUT:-$root/build/bench-peers/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
out=$(realpath "$out")

# A private writable copy of the harness with its pinned npm dependencies
# (npm ci from its lock file, once): run.sh then runs in place, and
# concurrent benches do not share a folder.
work=$root/build/peer-bench
if [[ ! -d $work/node_modules/graphile-worker ]] || ! cmp -s "$peers_src/package-lock.json" \
  "$work/package-lock.json"; then
  echo "[bench] preparing the peer harness in $work (npm ci)"
  rm -rf "$work"
  mkdir -p "$work"
  cp -r "$peers_src"/{README.md,bench.mjs,lib,package.json,package-lock.json,.npmrc,run.sh,summarize.mjs,tools} "$work"/
  chmod -R u+w "$work"
  (cd "$work" && npm ci --no-audit --no-fund)
fi

export MG_BENCH_ROUNDS=${ROUNDS:-3} MG_BENCH_WORK=$work MG_BENCH_RESULTS=$out MG_BENCH_MOVEGATE=$bin
echo "[bench] $MG_BENCH_ROUNDS rounds, results in $out"
exec bash scripts/with-pg.sh bash "$root/scripts/bench_peers_rounds.sh" "$@"
