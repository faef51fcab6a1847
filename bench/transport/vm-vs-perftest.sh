#!/bin/sh
# Runs in tiercc's SoftRoCE VM (busybox sh): perftest's ib_write_bw and tiercc-transport-bench
# --transport ibverbs --mode bw --op write at the same sizes, iterations and window over rxe0, side
# by side with the ratio tiercc/perftest. CMake copies it beside the binaries (the VM sees only the
# build dir); tests/softroce/ci.sh and bench/transport/compare.sh run it.
# usage: tiercc-transport-vs-perftest.sh [SIZE:ITERS]...  (default 65536:300 262144:100 1048576:30)
# Each size runs ROUNDS times (TIERCC_VS_PERFTEST_ROUNDS, default 2), the two tools alternating;
# the table shows each tool's best round. tiercc runs with --poll block (TIERCC_VS_PERFTEST_POLL):
# the VM has 2 vCPUs, a spinning receiver takes the one rxe's kernel work needs, and perftest's
# write_bw server does not poll at all.
# Fails only when a command fails or prints no result: the ratio is measured, never judged.
set -u
bin=$(cd "$(dirname "$0")" && pwd)
dev=${SOFTROCE_DEV:-rxe0}
gid=${SOFTROCE_GID_INDEX:-1}
ip=${SOFTROCE_IP:-192.0.2.1}
window=${TIERCC_VS_PERFTEST_WINDOW:-64}
poll=${TIERCC_VS_PERFTEST_POLL:-block}
rounds=${TIERCC_VS_PERFTEST_ROUNDS:-2}
port=18515
[ $# -gt 0 ] || set -- 65536:300 262144:100 1048576:30
tmp=$(mktemp -d)
rows=$tmp/rows

die() {
  echo "vs-perftest: FAILED: $*" >&2
  for f in "$tmp"/*.out; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; } >&2; done
  exit 1
}

# ib_write_bw SIZE ITERS: a server in the background, then the client against it (retried while
# the server is not listening yet); prints the client's "BW average" in MB/s (10^6 B/s).
perftest_bw() {
  port=$((port + 1))
  common="-d $dev -x $gid -s $1 -n $2 -t $window -F -p $port"
  # shellcheck disable=SC2086
  timeout 60 ib_write_bw $common >"$tmp/server.out" 2>&1 &
  server=$!
  tries=0
  # shellcheck disable=SC2086
  until timeout 60 ib_write_bw $common "$ip" >"$tmp/client.out" 2>&1; do
    tries=$((tries + 1))
    [ $tries -lt 20 ] && grep -q "Couldn't connect\|Unable to open file descriptor for socket connection" "$tmp/client.out" ||
      { kill "$server" 2>/dev/null; die "ib_write_bw $common $ip failed"; }
    sleep 0.5
  done
  wait "$server" || die "the ib_write_bw server ($common) failed"
  cat "$tmp/client.out" >&2
  # perftest's MB/sec is 2^20 bytes/s (format_factor 0x100000): converted to 10^6 bytes/s.
  awk -v s="$1" '$1 == s && NF >= 5 { printf "%.2f\n", $4 * 1.048576; found = 1 } END { exit !found }' \
    "$tmp/client.out" || die "no result line for $1 bytes in ib_write_bw's output"
}

# tiercc-transport-bench at one size; prints two BW averages in MB/s (10^6 B/s): timed to rank 1's
# acknowledgement of the last write (bw_MBps), and to the last local completion (bw_local_MBps),
# which is how perftest times (the peer's device, not its process, has acknowledged the write).
tiercc_bw() {
  timeout 60 "$bin/tiercc-transport-bench" --transport ibverbs --mode bw --op write -b "$1" -e "$1" -n "$2" \
    -t "$window" --poll "$poll" --json >"$tmp/tiercc.out" 2>&1 || die "tiercc-transport-bench at $1 bytes failed"
  cat "$tmp/tiercc.out" >&2
  sed -n 's/.*"bw_MBps":\([0-9.e+]*\).*"bw_local_MBps":\([0-9.e+]*\).*/\1 \2/p' "$tmp/tiercc.out" |
    awk 'NR == 1 { printf "%.2f %.2f\n", $1, $2; found = 1 } END { exit !found }' ||
    die "no bw_MBps in tiercc-transport-bench's output"
}

# The larger of two figures; 0 (perftest's cycle-counter timing under TCG now and then reports
# 0.00) counts as no figure.
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (a + 0 > b + 0) ? a : b }'; }

echo "vs-perftest: $dev, GID index $gid, window (perftest -t) $window, tiercc --poll $poll, $rounds round(s)," \
  "sizes:iterations $*"
for spec in "$@"; do
  size=${spec%%:*} iters=${spec#*:}
  pbest=0 tbest=0 lbest=0 round=1
  while [ "$round" -le "$rounds" ]; do
    p=$(perftest_bw "$size" "$iters") || exit 1
    t=$(tiercc_bw "$size" "$iters") || exit 1
    l=${t#* } t=${t% *}
    echo "vs-perftest: $size B, round $round: perftest $p MB/s, tiercc $t MB/s (to the last local completion: $l)"
    pbest=$(best "$p" "$pbest") tbest=$(best "$t" "$tbest") lbest=$(best "$l" "$lbest") round=$((round + 1))
  done
  echo "$size $iters $pbest $tbest $lbest" >>"$rows"
done
echo "vs-perftest: ib_write_bw vs tiercc ibverbs iwrite+inotify, BW average in MB/s (10^6 bytes/s), best of $rounds"
echo "vs-perftest: tiercc = timed to rank 1's acknowledgement; tiercc-local = to the last local completion, as perftest"
printf '%10s %10s %12s %12s %16s %13s %16s\n' bytes iterations perftest tiercc tiercc/perftest tiercc-local \
  local/perftest
awk 'function ratio(a, b) { return (a > 0 && b > 0) ? sprintf("%.2f", a / b) : "n/a" }
     { printf "%10d %10d %12.2f %12.2f %16s %13.2f %16s\n", $1, $2, $3, $4, ratio($4, $3), $5, ratio($5, $3) }' "$rows"
rm -rf "$tmp"
