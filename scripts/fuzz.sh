#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/*_fuzz.cpp, ASan + UBSan, in
# build-fuzz/) and runs each for SECONDS (default 60) from its checked-in
# seed corpus tests/fuzz/corpus/<target>/. One line per target: name,
# execs/s, coverage (cov: edges, ft: features), result. Exits non-zero when
# any target crashed, leaked or broke an invariant; the offending inputs are
# kept in build-fuzz/fuzz-crashes/<target>/ (replay one with
# `build-fuzz/<target> <file>`).
#
# The fuzzers grow a temporary copy of the corpus; MG_FUZZ_KEEP_CORPUS=1
# merges what they found (minimised) back into tests/fuzz/corpus/.
# MG_FUZZ_ONLY=<regex> runs only the matching targets. MG_FUZZ_TIMEOUT
# (default 10) is the seconds one input may take before it counts as a hang;
# raise it when the fuzzers run at low priority on a busy machine, where a
# descheduled process looks hung.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
seconds=${1:-60}
build=${MG_FUZZ_BUILD_DIR:-build-fuzz}
only=${MG_FUZZ_ONLY:-.}
input_timeout=${MG_FUZZ_TIMEOUT:-10}

launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

echo "[fuzz] building the fuzz targets in $build/"
cmake -S . -B "$build" -DMG_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${launcher[@]}" >"$build.configure.log" 2>&1 || {
  cat "$build.configure.log" >&2
  exit 1
}
cmake --build "$build" -j2 --target fuzz_targets 2>&1 | grep -vE '^\[ *[0-9]+%\]' || true
if [[ ${PIPESTATUS[0]} -ne 0 ]]; then
  echo "[fuzz] build failed" >&2
  exit 1
fi

work=$(mktemp -d /tmp/movegate-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
crashes=$root/$build/fuzz-crashes
# Leaks are findings too; UBSan already aborts (-fno-sanitize-recover).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
# UBSan options come from the targets themselves (tests/fuzz/fuzz_check.hpp).

failed=0
ran=0
printf '[fuzz] %-28s %9s %8s %8s %10s  %s\n' target execs/s cov ft execs result
while read -r target; do
  [[ -n $target && $target =~ $only ]] || continue
  bin=$root/$build/$target
  seeds=$root/tests/fuzz/corpus/$target
  corpus=$work/$target
  mkdir -p "$corpus" "$crashes/$target"
  [[ -d $seeds ]] && cp -r "$seeds/." "$corpus/"
  log=$work/$target.log
  rc=0
  # One process (the machine is shared); -timeout: one input may not take
  # more than input_timeout seconds; -rss_limit_mb: nor more than 2 GiB.
  "$bin" "$corpus" -max_total_time="$seconds" -timeout="$input_timeout" -rss_limit_mb=2048 \
    -artifact_prefix="$crashes/$target/" -print_final_stats=1 >"$log" 2>&1 || rc=$?
  ran=$((ran + 1))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  if [[ $rc -eq 0 ]]; then
    result=ok
  else
    failed=$((failed + 1))
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    what=$(grep -m1 -oE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer): [a-z-]+|runtime error: .*|invariant broken at .*' "$log" || echo "exit $rc")
    result="FAILED ($what) input: ${artifact:-none}"
    cp "$log" "$crashes/$target/last.log"
  fi
  printf '[fuzz] %-28s %9s %8s %8s %10s  %s\n' "$target" "${rate:-?}" "${cov:-?}" "${ft:-?}" \
    "${execs:-?}" "$result"
  if [[ $rc -ne 0 ]]; then
    echo "[fuzz]   log: $crashes/$target/last.log; replay: $build/$target ${artifact:-<input>}"
  fi
  if [[ ${MG_FUZZ_KEEP_CORPUS:-0} == 1 && $rc -eq 0 ]]; then
    mkdir -p "$seeds"
    "$bin" -merge=1 "$seeds" "$corpus" >"$work/$target.merge.log" 2>&1
  fi
done <"$root/$build/fuzz_targets.txt"

if ((ran == 0)); then
  echo "[fuzz] no target matched '$only'" >&2
  exit 1
fi
if ((failed > 0)); then
  echo "[fuzz] $failed of $ran target(s) failed; inputs under $build/fuzz-crashes/" >&2
  exit 1
fi
echo "[fuzz] $ran target(s), ${seconds} s each: no crash, leak or broken invariant"
