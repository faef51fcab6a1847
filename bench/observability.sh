#!/usr/bin/env bash
# bench/observability.sh: what seeing inside a job costs. Alternating launches of tiercc-perf
# (off, on, off, on, ...) on one host, so that drifts in the host's speed hit both alike:
#   allreduce 8 B    off: TIERCC_FLIGHT_RECORDER=0, no metrics;  on: the recorder (default 64)
#                    and the /metrics endpoint (TIERCC_METRICS_PORT), scraped every second
#   allreduce 1 MiB  off: no timeline;                           on: TIERCC_TRACE
# Progress publishing rides on the heartbeat and is on in both. Prints per case the median
# launch time of each setting (out-of-place time per call) and on / off: 1.03 is 3% slower.
#
# usage: bench/observability.sh [--build DIR] [--rounds N] [-n RANKS]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${TIERCC_BUILD_DIR:-$root/build} rounds=11 ranks=2
while (($#)); do
  case $1 in
    --build) build=${2:?}; shift ;;
    --rounds) rounds=${2:?}; shift ;;
    -n) ranks=${2:?}; shift ;;
    -h | --help) sed -n '2,11s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[[ -x $build/bin/tiercc-perf && -x $build/bin/tiercc-run ]] || { echo "no bin/tiercc-perf in $build" >&2; exit 2; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# A base port for the metrics endpoints, below the kernel's ephemeral range (ranks add their index).
metrics_port=$((20000 + $$ % 10000))

# One launch with extra environment "$@": prints the out-of-place time per call in us.
launch() { # bytes iters env...
  local bytes=$1 iters=$2 json=$work/perf.json
  shift 2
  rm -f "$json"
  env "$@" timeout 300 "$build/bin/tiercc-run" -n "$ranks" "$build/bin/tiercc-perf" --coll allreduce -b "$bytes" \
    -e "$bytes" -n "$iters" -w $((iters / 20 + 1)) -c 0 --json "$json" >/dev/null 2>&1 || { echo nan; return; }
  { grep -o '"oop_time_us":[0-9.e+-]*' "$json" || true; } | head -1 | cut -d: -f2
}

# Scrapes every rank's /metrics every second (a Prometheus with a short interval); the "off"
# launches refuse the connection.
scraper() {
  while :; do
    for ((i = 0; i < ranks; i++)); do
      { exec 3<>"/dev/tcp/127.0.0.1/$((metrics_port + i))" && printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3 &&
        cat <&3 >/dev/null && exec 3<&-; } 2>/dev/null || true
    done
    sleep 1
  done
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "tiercc $(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown), $ranks ranks, $rounds alternating" \
  "rounds per case; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| case | off: median (us) | on: median (us) | on / off |"
echo "|---|---:|---:|---:|"
run_case() { # name bytes iters "off env" "on env"
  local off=() on=()
  for ((r = 0; r < rounds; r++)); do
    # shellcheck disable=SC2086
    off+=("$(launch "$2" "$3" $4)")
    # shellcheck disable=SC2086
    on+=("$(launch "$2" "$3" $5)")
  done
  local a b
  a=$(printf '%s\n' "${off[@]}" | grep -E '^[0-9.]+' | median)
  b=$(printf '%s\n' "${on[@]}" | grep -E '^[0-9.]+' | median)
  awk -v n="$1" -v a="$a" -v b="$b" 'BEGIN { printf "| %s | %.3f | %.3f | %.3f |\n", n, a, b, b / a }'
}
scraper 2>/dev/null &
run_case "allreduce 8 B: recorder + metrics" 8 20000 "TIERCC_FLIGHT_RECORDER=0" \
  "TIERCC_FLIGHT_RECORDER=64 TIERCC_METRICS_PORT=$metrics_port"
kill %1 2>/dev/null || true
run_case "allreduce 1 MiB: timeline" 1048576 1000 "TIERCC_FLIGHT_RECORDER=64" \
  "TIERCC_FLIGHT_RECORDER=64 TIERCC_TRACE=$work/trace"
