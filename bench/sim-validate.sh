#!/usr/bin/env bash
# Compares tiercc-sim's predictions with measured tiercc-perf runs (allreduce f32, hierarchical,
# 1 MiB..64 MiB, 2 domains x 2 ranks) on this machine, in two setups:
#   net:    bench/two-tier-net.sh's network, rails rate-limited to RATE, scale-up paced to UP_BW
#   paced:  loopback TCP, scale-out paced to OUT_BW and scale-up to UP_BW by the link model
# and prints predicted vs measured busbw and the error. Needs root (network namespaces).
# Usage: bench/sim-validate.sh [--rate 500mbit] [--out-bw 0.125GB/s] [--up-bw 1GB/s] [BUILD_DIR]
# (The default rates keep the paced links well below this 2-core machine's own speed; see
# docs/simulator.md "Validation".)
set -euo pipefail
shopt -s inherit_errexit

HERE=$(cd "$(dirname "$0")" && pwd)
readonly HERE NET=$HERE/two-tier-net.sh
readonly DOMAINS=2 K=2 WORLD=4
readonly PERF_ARGS=(--coll allreduce -d float -b 1M -e 64M -f 4 -n 5 -w 1 --algo hierarchical)
# This machine's step latencies, estimated (TCP round over loopback or veth; a futex wake with
# ranks sharing 2 cores). At >= 1 MiB they are a small part of the time.
readonly OUT_LAT=50us UP_LAT=10us
rate=500mbit out_bw=0.125GB/s up_bw=1GB/s build=$HERE/../build
while (($# > 0)); do
  case $1 in
    --rate) rate=${2:?}; shift 2 ;;
    --out-bw) out_bw=${2:?}; shift 2 ;;
    --up-bw) up_bw=${2:?}; shift 2 ;;
    -h | --help) sed -n '7s/^# //p' "$0"; exit 0 ;;
    *) build=$1; shift ;;
  esac
done
readonly BIN=$build/bin
for tool in tiercc-perf tiercc-run tiercc-sim; do
  [[ -x $BIN/$tool ]] || { echo "sim-validate: no $tool in $BIN" >&2; exit 1; }
done
[[ $rate =~ ^([0-9]+)(kbit|mbit|gbit)$ ]] || { echo "--rate needs e.g. 500mbit" >&2; exit 1; }
case ${BASH_REMATCH[2]} in kbit) rate_sim=${BASH_REMATCH[1]}kb/s ;; mbit) rate_sim=${BASH_REMATCH[1]}Mb/s ;; gbit) rate_sim=${BASH_REMATCH[1]}Gb/s ;; esac

# "bytes busbw" rows (out of place) from rank 0's tiercc-perf table.
perf_rows() { awk '$1 == "[r0.d0]" && $2 ~ /^[0-9]+$/ {print $2, $9}'; }

measure_net() {
  if timeout 10 ip netns list | grep -qE '^(tiercc-fabric|tiercc-d[0-9]+)( |$)'; then
    echo "sim-validate: a two-tier network is already up (another run?); try later" >&2
    exit 1
  fi
  trap '"$NET" down >/dev/null 2>&1 || true' EXIT
  "$NET" up --domains $DOMAINS --ranks-per-domain $K --rate "$rate" >&2
  TIERCC_TRANSPORT=tcp TIERCC_EMU_SCALEUP_BW=$up_bw timeout 300 "$BIN/tiercc-run" --timeout 280 -n $WORLD \
    --domain-size $K --netns-prefix tiercc-d --rail-subnet 198.18 "$BIN/tiercc-perf" "${PERF_ARGS[@]}" | perf_rows
  "$NET" down >&2
  trap - EXIT
}

measure_paced() {
  TIERCC_TRANSPORT=tcp TIERCC_EMU_SCALEOUT_BW=$out_bw TIERCC_EMU_SCALEUP_BW=$up_bw timeout 300 \
    "$BIN/tiercc-run" --timeout 280 -n $WORLD --domain-size $K "$BIN/tiercc-perf" "${PERF_ARGS[@]}" | perf_rows
}

# "bytes busbw" predicted for the same sizes.
predict() {
  local json
  json=$(mktemp)
  "$BIN/tiercc-sim" --gpus $WORLD --domain $K --scaleout "$1" --scaleup "$up_bw" --scaleout-latency $OUT_LAT \
    --scaleup-latency $UP_LAT --flat-inside transport --op allreduce --algo hierarchical --sweep 1MiB:64MiB \
    --factor 4 --json "$json" >/dev/null
  sed -E 's/.*"bytes":([0-9]+).*"oop_busbw":([0-9.eE+-]+).*/\1 \2/' "$json"
  rm -f "$json"
}

table() {  # $1 title, $2 measured rows, $3 predicted rows
  echo "$1"
  echo
  echo "| size | measured busbw (GB/s) | predicted busbw (GB/s) | error |"
  echo "|---:|---:|---:|---:|"
  join <(sort -k1,1 <<<"$2") <(sort -k1,1 <<<"$3") | sort -n -k1,1 |
    awk '{printf "| %d MiB | %.4f | %.4f | %+.0f%% |\n", $1 / 1048576, $2, $3, 100 * ($3 - $2) / $2}'
  echo
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
net=$(measure_net)
paced=$(measure_paced)
table "net: rails $rate per direction (tbf), scale-up paced $up_bw; tiercc-sim --gpus 4 --domain 2 --scaleout $rate_sim" \
  "$net" "$(predict "$rate_sim")"
table "paced: loopback TCP, TIERCC_EMU_SCALEOUT_BW=$out_bw TIERCC_EMU_SCALEUP_BW=$up_bw; tiercc-sim --scaleout $out_bw" \
  "$paced" "$(predict "$out_bw")"
echo "tiercc-perf ${PERF_ARGS[*]} under tiercc-run -n $WORLD --domain-size $K, TIERCC_TRANSPORT=tcp;" \
  "tiercc-sim --scaleup $up_bw --scaleout-latency $OUT_LAT --scaleup-latency $UP_LAT --flat-inside transport --algo hierarchical"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
