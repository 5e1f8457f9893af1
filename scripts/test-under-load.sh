#!/usr/bin/env bash
# Runs `npm test` N times in a row while the machine's cores are kept busy, and reports each
# result: the unit suites must not depend on how fast the machine is (no wall-clock windows).
#
#   scripts/test-under-load.sh [RUNS]        (default 5; also `npm run test:under-load -- RUNS`)
#
# The load: `stress-ng --cpu BUSY` when stress-ng is installed (Debian package stress-ng), else BUSY
# busy-looping Node processes; BUSY defaults to twice the number of cores (RAYSHIFT_LOAD_PROCS).
# The load runs at normal priority beside the tests, stops when the script ends (also on Ctrl-C),
# and each run's output is kept in a log file whose path is printed. Exits non-zero if a run failed.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "RUNS must be a positive integer; got '$runs'" >&2; exit 2; }
busy=${RAYSHIFT_LOAD_PROCS:-$(( $(nproc) * 2 ))}
[[ "$busy" =~ ^[1-9][0-9]*$ ]] || { echo "RAYSHIFT_LOAD_PROCS must be a positive integer; got '$busy'" >&2; exit 2; }
logs=$(mktemp -d "${TMPDIR:-/tmp}/rayshift-test-under-load.XXXXXX")

load_pids=()
stop_load() {
  for p in "${load_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${load_pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap stop_load EXIT
if command -v stress-ng >/dev/null 2>&1; then
  stress-ng --cpu "$busy" --quiet &
  load_pids+=($!)
  what="stress-ng --cpu $busy"
else
  for _ in $(seq "$busy"); do
    node -e 'for (;;) {}' &
    load_pids+=($!)
  done
  what="$busy busy Node processes"
fi
echo "== load: $what on $(nproc) cores; logs in $logs"

failed=0
results=()
for i in $(seq "$runs"); do
  start=$(date +%s)
  log="$logs/run-$i.log"
  if npm test >"$log" 2>&1; then status=passed; else status=FAILED; failed=$((failed + 1)); fi
  summary=$(grep -E '^Tests: ' "$log" | tail -1 || true)
  line="run $i/$runs: $status in $(( $(date +%s) - start )) s, load average $(cut -d' ' -f1-3 /proc/loadavg); ${summary:-no jest summary (see $log)}"
  results+=("$line")
  echo "$line"
  if [[ $status == FAILED ]]; then grep -E '●|FAIL ' "$log" | head -20 || true; fi
done
echo "== $((runs - failed))/$runs runs passed under $what"
printf '%s\n' "${results[@]}" >"$logs/summary.txt"
[[ $failed -eq 0 ]]
