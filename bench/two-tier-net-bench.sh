#!/usr/bin/env bash
# Measures allreduce busbw of 2 domains x 2 ranks over bench/two-tier-net.sh's network, rail-optimised
# and --single-link, TCP scale-out, and prints it next to the bound the rate-limited links allow.
# Usage: bench/two-tier-net-bench.sh [--rate 4gbit] [BUILD_DIR]   (root; builds and removes the network)
set -euo pipefail
shopt -s inherit_errexit  # a failed run inside $(measure ...) stops the script (the trap cleans up)

HERE=$(cd "$(dirname "$0")" && pwd)
readonly HERE
readonly NET=$HERE/two-tier-net.sh
readonly DOMAINS=2 RANKS_PER_DOMAIN=2
readonly WORLD=$((DOMAINS * RANKS_PER_DOMAIN))
readonly PERF_ARGS=(--coll allreduce -b 1M -e 64M -f 4)
rate=4gbit
build=$HERE/../build

while (($# > 0)); do
  case $1 in
    --rate) rate=${2:?--rate needs a value}; shift 2 ;;
    -h | --help) sed -n '4s/^# //p' "$0"; exit 0 ;;
    *) build=$1; shift ;;
  esac
done
readonly BIN=$build/bin
[[ -x $BIN/tiercc-perf && -x $BIN/tiercc-run ]] || { echo "no tiercc-perf/tiercc-run in $BIN" >&2; exit 1; }
[[ $rate =~ ^([0-9]+)(kbit|mbit|gbit)$ ]] || { echo "--rate needs e.g. 4gbit, 500mbit" >&2; exit 1; }
case ${BASH_REMATCH[2]} in kbit) scale=1e3 ;; mbit) scale=1e6 ;; gbit) scale=1e9 ;; esac
# Bytes per second per link and direction.
link_bytes=$(awk -v n="${BASH_REMATCH[1]}" -v s="$scale" 'BEGIN {print n * s / 8}')

# Hierarchical allreduce sends 2(D-1)/D x S out of (and into) every domain across its L links,
# so algbw <= L x link / (2(D-1)/D); busbw = algbw x 2(n-1)/n as in nccl-tests.
busbw_bound() {
  awk -v links="$1" -v r="$link_bytes" -v d=$DOMAINS -v n=$WORLD \
    'BEGIN {printf "%.3f", links * r / (2 * (d - 1) / d) * 2 * (n - 1) / n / 1e9}'
}

# Prints "size time_us algbw busbw" per size (out-of-place columns) for one layout.
measure() {
  local layout=$1 out
  if [[ $layout == single ]]; then
    "$NET" up --domains $DOMAINS --ranks-per-domain $RANKS_PER_DOMAIN --rate "$rate" --single-link >&2
  else
    "$NET" up --domains $DOMAINS --ranks-per-domain $RANKS_PER_DOMAIN --rate "$rate" >&2
  fi
  echo "# $layout: load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  out=$(TIERCC_TRANSPORT=tcp timeout 300 "$BIN/tiercc-run" --timeout 280 -n $WORLD --domain-size $RANKS_PER_DOMAIN \
    --netns-prefix tiercc-d --rail-subnet 198.18 "$BIN/tiercc-perf" "${PERF_ARGS[@]}")
  "$NET" down
  awk '$1 == "[r0.d0]" && $2 ~ /^[0-9]+$/ {print $2, $7, $8, $9}' <<<"$out"
}

if timeout 10 ip netns list | grep -qE '^(tiercc-fabric|tiercc-d[0-9]+)( |$)'; then
  echo "a two-tier network is already up (a test running?); run '$NET down' when it is free" >&2
  exit 1
fi
trap '"$NET" down' EXIT

rails=$(measure rails)
single=$(measure single)
rails_bound=$(busbw_bound $RANKS_PER_DOMAIN)
single_bound=$(busbw_bound 1)

echo "command: tiercc-run -n $WORLD --domain-size $RANKS_PER_DOMAIN --netns-prefix tiercc-d --rail-subnet 198.18" \
  "tiercc-perf ${PERF_ARGS[*]}  (TIERCC_TRANSPORT=tcp, links $rate per direction)"
echo
echo "| size | rails busbw (GB/s) | rails bound | % | single-link busbw (GB/s) | single-link bound | % | rails / single |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
join <(sort -k1,1 <<<"$rails") <(sort -k1,1 <<<"$single") | sort -n -k1,1 |
  awk -v rb="$rails_bound" -v sb="$single_bound" '{
    size = $1 >= 1048576 ? sprintf("%d MiB", $1 / 1048576) : $1 " B"
    printf "| %s | %.3f | %.3f | %.0f%% | %.3f | %.3f | %.0f%% | %.2fx |\n",
           size, $4, rb, 100 * $4 / rb, $7, sb, 100 * $7 / sb, $4 / $7
  }'
