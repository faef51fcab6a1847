#!/usr/bin/env bash
# The kill/stop table (issue 14): N ranks in domains of K, started without a launcher (rank 0
# hosts the store through tiercc_comm_init_rank, as under mpirun), each looping allreduces of
# 256 KiB. One victim then gets SIGKILL or SIGSTOP; the table says how many survivors raised,
# how long after the signal the last one did, and how many named the victim. Default heartbeat
# settings unless the environment sets them. Loopback only; every process is gone at the end.
#
# Usage: bench/failure/table.sh [--build DIR] [-n N] [--domain-size K] [--victims "2 6 0"]
set -euo pipefail

build=build n=8 k=4 victims=""
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    -n) n=$2; shift 2 ;;
    --domain-size) k=$2; shift 2 ;;
    --victims) victims=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [-n N] [--domain-size K] [--victims \"R ...\"]" >&2; exit 2 ;;
  esac
done
rank_bin=$build/bin/bench_failure_rank
[[ -x $rank_bin ]] || { echo "no $rank_bin: build first (scripts/build.sh)" >&2; exit 1; }
# A rank of domain 0, one of the last domain, and rank 0, the store's host.
[[ -n $victims ]] || victims="$((k / 2)) $((n - 2)) 0"

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now_ns() { date +%s%N; }

# count_in FILE_PREFIX PATTERN: how many ranks' outputs match
count_in() {
  local c=0 r
  for ((r = 0; r < n; ++r)); do grep -q "$2" "$1.$r" 2>/dev/null && c=$((c + 1)); done
  echo $c
}

run_case() {  # victim signal -> one table row
  local victim=$1 sig=$2 out=$work/v$1-$2 port secret r
  port=$(free_port)
  secret=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
  pids=()
  for ((r = 0; r < n; ++r)); do
    TIERCC_DOMAIN_SIZE=$k TIERCC_STORE_SECRET=$secret TIERCC_TIMEOUT=${TIERCC_TIMEOUT:-60s} \
      TIERCC_DEBUG=${TIERCC_DEBUG:-NONE} "$rank_bin" "127.0.0.1:$port" "$n" "$r" >"$out.$r" 2>&1 &
    pids+=($!)
  done
  local deadline=$(($(date +%s) + 60))
  until (($(count_in "$out" '^ready') == n)); do
    if (($(date +%s) > deadline)) || (($(count_in "$out" '^raised\|failed') > 0)); then
      echo "the job did not get ready:" >&2; cat "$out".* >&2; exit 1
    fi
    sleep 0.05
  done
  local t0
  t0=$(now_ns)
  kill -"$sig" "${pids[$victim]}"
  deadline=$(($(date +%s) + 70))
  until (($(count_in "$out" '^raised') >= n - 1)) || (($(date +%s) > deadline)); do sleep 0.05; done
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
  local raised=0 named=0 worst=0 line at ms domain=$((victim / k)) who
  for ((r = 0; r < n; ++r)); do
    ((r == victim)) && continue
    line=$(grep -m1 '^raised' "$out.$r" || true)
    [[ -n $line ]] || continue
    raised=$((raised + 1))
    at=$(sed -n 's/^raised [a-z ]* at \([0-9]*\):.*/\1/p' <<<"$line")
    ms=$(((at - t0) / 1000000))
    ((ms > worst)) && worst=$ms
    grep -q "rank $victim (domain $domain" <<<"$line" && named=$((named + 1))
  done
  who="rank $victim (domain $domain)"
  ((victim == 0)) && who="rank 0 (domain 0, the store's host)"
  printf '| %s | SIG%s | %d of %d raised, the last after %d ms | %d of %d |\n' \
    "$who" "$sig" "$raised" $((n - 1)) "$worst" "$named" $((n - 1))
  if ((named < n - 1)); then
    for ((r = 0; r < n; ++r)); do ((r == victim)) || grep -m1 '^raised' "$out.$r" | sed "s/^/    rank $r: /" || true; done
  fi
}

echo "$n ranks in domains of $k, no launcher (rank 0 hosts the store), allreduce of 256 KiB in a loop;"
echo "heartbeat period ${TIERCC_HEARTBEAT_PERIOD:-500ms}, timeout ${TIERCC_HEARTBEAT_TIMEOUT:-3s}"
echo
echo "| victim | signal | survivors that raised | named the victim |"
echo "|---|---|---|---|"
for v in $victims; do
  for s in KILL STOP; do run_case "$v" "$s"; done
done
