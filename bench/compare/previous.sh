#!/usr/bin/env bash
# bench/compare/previous.sh: this build's tiercc against another build's, one host, alternating
# launches (this, previous, this, ...) of tiercc-perf at one size each, so that drifts in the
# host's speed hit both alike. Prints per case the fastest and the median launch time of each
# build and their ratios (this / previous: below 1 is faster). For the sizes where a sweep of
# bench/compare/run.sh --previous is too noisy to tell.
#
# usage: bench/compare/previous.sh --previous DIR [--build DIR] [--rounds N] [-n RANKS]
#                                  CASE [CASE...]
#   CASE   COLL:SIZE[:sym][:ITERS], e.g. allreduce:8, allgather:8M:sym, alltoall:4M::20
#          (sym: tiercc-perf --symmetric; ITERS: timed calls per launch, default by size)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${TIERCC_BUILD_DIR:-$root/build} previous="" rounds=11 ranks=2
cases=()
while (($#)); do
  case $1 in
    --previous) previous=${2:?}; shift ;;
    --build) build=${2:?}; shift ;;
    --rounds) rounds=${2:?}; shift ;;
    -n) ranks=${2:?}; shift ;;
    -h | --help) sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) cases+=("$1") ;;
  esac
  shift
done
[[ -n $previous && ${#cases[@]} -gt 0 ]] || { sed -n '8,11s/^# \{0,1\}//p' "$0" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ && $ranks =~ ^[1-9][0-9]*$ ]] || { echo "--rounds and -n take positive numbers" >&2; exit 2; }
for dir in "$build" "$previous"; do
  [[ -x $dir/bin/tiercc-perf && -x $dir/bin/tiercc-run ]] || { echo "no bin/tiercc-perf, bin/tiercc-run in $dir" >&2; exit 2; }
done

# "64M" -> bytes (binary units, like nccl-tests)
to_bytes() {
  local n=${1%%[kKmMgG]*} u=${1#"${1%%[kKmMgG]*}"}
  case $u in "") echo "$n" ;; k | K) echo $((n << 10)) ;; m | M) echo $((n << 20)) ;; g | G) echo $((n << 30)) ;;
    *) echo "bad size: $1" >&2; exit 2 ;; esac
}
# One launch: prints the out-of-place time per call in us.
launch() { # dir coll bytes iters sym
  local json
  json=$(mktemp)
  local symmetric=()
  [[ $5 == sym ]] && symmetric=(--symmetric)
  timeout 300 "$1/bin/tiercc-run" -n "$ranks" "$1/bin/tiercc-perf" --coll "$2" -b "$3" -e "$3" -n "$4" \
    -w $(($4 / 20 + 1)) -c 0 --json "$json" "${symmetric[@]}" >/dev/null 2>&1 || { rm -f "$json"; echo nan; return; }
  { grep -o '"oop_time_us":[0-9.e+-]*' "$json" || true; } | head -1 | cut -d: -f2
  rm -f "$json"
}

echo "this: $build ($(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)); previous: $previous;" \
  "$ranks ranks, $rounds alternating rounds per case; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| case | fastest (us) | previous fastest | fastest ratio | median (us) | previous median | median ratio |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for spec in "${cases[@]}"; do
  IFS=: read -r coll size sym iters <<<"$spec"
  bytes=$(to_bytes "$size")
  # About 50 ms of calls per launch, at least 5.
  iters=${iters:-$((bytes <= 65536 ? 20000 : bytes <= 1048576 ? 1000 : bytes <= 8388608 ? 100 : 10))}
  now=() before=()
  for ((r = 0; r < rounds; r++)); do
    now+=("$(launch "$build" "$coll" "$bytes" "$iters" "$sym")")
    before+=("$(launch "$previous" "$coll" "$bytes" "$iters" "$sym")")
  done
  # Failed launches (no number) are left out and counted.
  printf '%s\n' "${now[@]}" | grep -E '^[0-9.]+([eE][-+]?[0-9]+)?$' | sort -g >/tmp/previous.now.$$ || true
  printf '%s\n' "${before[@]}" | grep -E '^[0-9.]+([eE][-+]?[0-9]+)?$' | sort -g >/tmp/previous.before.$$ || true
  failed=$((2 * rounds - $(cat /tmp/previous.now.$$ /tmp/previous.before.$$ | wc -l)))
  if [[ ! -s /tmp/previous.now.$$ || ! -s /tmp/previous.before.$$ ]]; then
    echo "| $coll $size${sym:+ $sym} | every launch of one build failed | | | | | |"
    rm -f /tmp/previous.now.$$ /tmp/previous.before.$$
    continue
  fi
  ((failed == 0)) || echo "($coll $size${sym:+ $sym}: $failed launches failed, left out)" >&2
  awk -v name="$coll $size${sym:+ $sym}" '
    FNR == 1 { f++ }
    f == 1 { a[++na] = $1 }
    f == 2 { b[++nb] = $1 }
    END {
      ma = int((na + 1) / 2); mb = int((nb + 1) / 2)
      printf "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", name, a[1], b[1], a[1] / b[1], a[ma], b[mb], a[ma] / b[mb]
    }' /tmp/previous.now.$$ /tmp/previous.before.$$
  rm -f /tmp/previous.now.$$ /tmp/previous.before.$$
done
