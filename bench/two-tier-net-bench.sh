#!/usr/bin/env bash
# Measures tiercc's collectives on 2 domains x 2 ranks over bench/two-tier-net.sh's rate-limited
# network (TCP scale-out), rail-optimised and --single-link, and prints each size's time next to
# the time the links allow (the bound). With --previous, another build runs the same launches,
# taking turns with this one, and the table gives the ratio of their times.
# Usage: bench/two-tier-net-bench.sh [--rate 4gbit] [--colls allreduce,...] [--layouts rails,single]
#          [--sizes 1M:64M] [--iters N] [--repeat R] [--previous BUILD_DIR] [BUILD_DIR]
#   (root; builds and removes the network)
set -euo pipefail
shopt -s inherit_errexit  # a failed run inside $(measure ...) stops the script (the trap cleans up)

HERE=$(cd "$(dirname "$0")" && pwd)
readonly HERE
readonly NET=$HERE/two-tier-net.sh
readonly DOMAINS=2 RANKS_PER_DOMAIN=2
readonly WORLD=$((DOMAINS * RANKS_PER_DOMAIN))
rate=4gbit colls=allreduce layouts=rails,single sizes=1M:64M iters=10 repeat=1 previous=""
build=$HERE/../build
command_line="bench/two-tier-net-bench.sh${*:+ }$*"

while (($# > 0)); do
  case $1 in
    --rate) rate=${2:?--rate needs a value}; shift 2 ;;
    --colls) colls=${2:?}; shift 2 ;;
    --layouts) layouts=${2:?}; shift 2 ;;
    --sizes) sizes=${2:?}; shift 2 ;;
    --iters) iters=${2:?}; shift 2 ;;
    --repeat) repeat=${2:?}; shift 2 ;;
    --previous) previous=${2:?}; shift 2 ;;
    -h | --help) sed -n '2,8s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) build=$1; shift ;;
  esac
done
for bin in "$build" ${previous:+"$previous"}; do
  [[ -x $bin/bin/tiercc-perf && -x $bin/bin/tiercc-run ]] || { echo "no tiercc-perf/tiercc-run in $bin/bin" >&2; exit 1; }
done
[[ $rate =~ ^([0-9]+)(kbit|mbit|gbit)$ ]] || { echo "--rate needs e.g. 4gbit, 500mbit" >&2; exit 1; }
case ${BASH_REMATCH[2]} in kbit) scale=1e3 ;; mbit) scale=1e6 ;; gbit) scale=1e9 ;; esac
link_bytes=$(awk -v n="${BASH_REMATCH[1]}" -v s="$scale" 'BEGIN {print n * s / 8}')  # per link and direction
[[ $sizes =~ ^([0-9]+[KMG]?):([0-9]+[KMG]?)$ ]] || { echo "--sizes needs FIRST:LAST, e.g. 1M:64M" >&2; exit 1; }
first=${BASH_REMATCH[1]} last=${BASH_REMATCH[2]}
[[ $iters =~ ^[1-9][0-9]*$ && $repeat =~ ^[1-9][0-9]*$ ]] || { echo "--iters and --repeat need positive numbers" >&2; exit 1; }

# What leaves (or enters) the busiest domain across the slow tier, as a multiple of the size S
# (nccl-tests' size, as tiercc-perf prints it): allreduce 2(D-1)/D S; reduce-scatter and
# allgather (D-1)/D S; broadcast and reduce S to or from each other domain; all-to-all the
# cross-domain share of each rank's S, k (N-k)/N S per domain. Spread over its L links.
share() { # coll
  case $1 in
    allreduce) echo "2 * ($DOMAINS - 1) / $DOMAINS" ;;
    reduce_scatter | allgather) echo "($DOMAINS - 1) / $DOMAINS" ;;
    broadcast | reduce) echo "$DOMAINS - 1" ;;
    alltoall) echo "$RANKS_PER_DOMAIN * ($WORLD - $RANKS_PER_DOMAIN) / $WORLD" ;;
    *) echo "unknown collective '$1'" >&2; exit 1 ;;
  esac
}
IFS=, read -ra coll_list <<<"$colls"
IFS=, read -ra layout_list <<<"$layouts"
for coll in "${coll_list[@]}"; do share "$coll" >/dev/null; done
for layout in "${layout_list[@]}"; do [[ $layout == rails || $layout == single ]] || { echo "unknown layout '$layout'" >&2; exit 1; }; done

# Prints "size time_us" per size (out-of-place) for one build, collective, and the network up now.
measure() { # build coll
  local out
  out=$(TIERCC_TRANSPORT=tcp timeout 300 "$1/bin/tiercc-run" --timeout 280 -n $WORLD --domain-size $RANKS_PER_DOMAIN \
    --netns-prefix tiercc-d --rail-subnet 198.18 "$1/bin/tiercc-perf" --coll "$2" -b "$first" -e "$last" -f 4 \
    -n "$iters" -w 1)
  awk '$1 == "[r0.d0]" && $2 ~ /^[0-9]+$/ {print $2, $7}' <<<"$out"
}
# Keeps the faster time per size of two "size time" lists.
fastest() { sort -k1,1n -k2,2g <<<"$1"$'\n'"$2" | awk 'NF == 2 && !seen[$1]++'; }

if timeout 10 ip netns list | grep -qE '^(tiercc-fabric|tiercc-d[0-9]+)( |$)'; then
  echo "a two-tier network is already up (a test running?); run '$NET down' when it is free" >&2
  exit 1
fi
trap '"$NET" down >/dev/null 2>&1 || true' EXIT

echo "command: $command_line"
echo "launch: TIERCC_TRANSPORT=tcp tiercc-run -n $WORLD --domain-size $RANKS_PER_DOMAIN --netns-prefix tiercc-d" \
  "--rail-subnet 198.18 tiercc-perf --coll C -b $first -e $last -f 4 -n $iters -w 1; links $rate per direction;" \
  "best of $repeat launch(es) per build${previous:+, this build and $previous taking turns}"
for layout in "${layout_list[@]}"; do
  links=$RANKS_PER_DOMAIN net_flags=(--domains $DOMAINS --ranks-per-domain $RANKS_PER_DOMAIN --rate "$rate")
  if [[ $layout == single ]]; then links=1 net_flags+=(--single-link); fi
  "$NET" up "${net_flags[@]}" >&2
  echo
  echo "## $layout ($links link(s) per domain); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  for coll in "${coll_list[@]}"; do
    now="" before=""
    for ((r = 1; r <= repeat; r++)); do
      # Each measure on its own line: a failed launch then stops the script (set -e).
      run=$(measure "$build" "$coll")
      [[ -n $run ]] || { echo "$coll: no results from $build" >&2; exit 1; }
      now=$(fastest "$now" "$run")
      if [[ -n $previous ]]; then
        run=$(measure "$previous" "$coll")
        [[ -n $run ]] || { echo "$coll: no results from $previous" >&2; exit 1; }
        before=$(fastest "$before" "$run")
      fi
    done
    echo
    echo "### $coll"
    echo
    if [[ -n $previous ]]; then
      echo "| size | time (us) | bound (us) | % of bound | previous (us) | previous % | time / previous |"
      echo "|---:|---:|---:|---:|---:|---:|---:|"
    else
      echo "| size | time (us) | bound (us) | % of bound |"
      echo "|---:|---:|---:|---:|"
    fi
    join -a1 <(sort -k1,1 <<<"$now") <(sort -k1,1 <<<"$before") | sort -n -k1,1 |
      awk -v share="$(awk "BEGIN {print $(share "$coll")}")" -v links="$links" -v r="$link_bytes" '{
        size = $1 >= 1048576 ? sprintf("%d MiB", $1 / 1048576) : $1 " B"
        bound = share * $1 / (links * r) * 1e6
        line = sprintf("| %s | %.0f | %.0f | %.0f%% |", size, $2, bound, 100 * bound / $2)
        if (NF >= 3) line = line sprintf(" %.0f | %.0f%% | %.3f |", $3, 100 * bound / $3, $2 / $3)
        print line
      }'
  done
  echo
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  "$NET" down >&2
done
