#!/usr/bin/env bash
# Compares tiercc's scale-out transports with the reference tools; docs/performance.md quotes it.
#   --host: tiercc-transport-bench --mode bw over tcp and ucx (send and write) vs iperf3 on
#           127.0.0.1 (one stream and -P 2), 64 KiB..8 MiB, in Gbit/s (10^9 bits/s);
#   --vm:   in the SoftRoCE VM (one boot), tiercc ibverbs iwrite vs perftest's ib_write_bw over rxe0,
#           64 KiB..1 MiB, with the ratio (tiercc-transport-vs-perftest.sh, also a ci.sh check).
# usage: bench/transport/compare.sh [--host] [--vm] [--rounds N] [--poll block|spin] [BUILD_DIR]
#   default: both parts, 3 rounds (each tiercc figure is the best of N runs: interference on a
#   shared machine only slows runs down), --poll block, build/.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
host=0 vm=0 rounds=3 poll=block build=$root/build
while (($#)); do
  case $1 in
    --host) host=1; shift ;;
    --vm) vm=1; shift ;;
    --rounds) rounds=$2; shift 2 ;;
    --poll) poll=$2; shift 2 ;;
    -h | --help) sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "compare.sh: unknown option $1" >&2; exit 2 ;;
    *) build=$1; shift ;;
  esac
done
((host || vm)) || host=1 vm=1
build=$(cd "$build" && pwd)
bin=$build/bin
die() {
  echo "compare.sh: FAILED: $*" >&2
  exit 1
}
[[ -x $bin/tiercc-transport-bench ]] ||
  die "$bin/tiercc-transport-bench is not built (cmake --build $build --target tiercc-transport-bench)"
as_root() { if ((EUID == 0)); then "$@"; else sudo "$@"; fi; }
sizes=(65536 131072 262144 524288 1048576 2097152 4194304 8388608)

# tiercc-transport-bench TRANSPORT OP SIZE: the best of $rounds runs, in Gbit/s. Iterations move
# about 512 MiB per run (64..5000).
tiercc_gbps() {
  local n=$((536870912 / $3)) best=0 r out gbps
  ((n > 5000)) && n=5000
  ((n < 64)) && n=64
  for ((r = 0; r < rounds; ++r)); do
    out=$(timeout 120 "$bin/tiercc-transport-bench" --transport "$1" --mode bw --op "$2" -b "$3" -e "$3" -n "$n" \
      --poll "$poll" --json) || die "tiercc-transport-bench --transport $1 --op $2 -b $3 failed"
    gbps=$(sed -n 's/.*"bw_Gbps":\([0-9.e+-]*\).*/\1/p' <<<"$out")
    [[ -n $gbps ]] || die "no bw_Gbps in: $out"
    best=$(awk -v a="$gbps" -v b="$best" 'BEGIN { print (a + 0 > b + 0) ? a : b }')
  done
  echo "$best"
}

# iperf3 SIZE STREAMS: receiver's bits/s over 3 s in Gbit/s, -l SIZE (the size of each write;
# iperf3 takes at most 1 MiB).
iperf3_gbps() {
  local out len=$(($1 < 1048576 ? $1 : 1048576))
  out=$(timeout 30 iperf3 -c 127.0.0.1 -p "$iperf_port" -t 3 -l "$len" -P "$2" -J) || die "iperf3 -c -l $len -P $2 failed"
  python3 -c 'import json, sys; print("%.3f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e9))' \
    <<<"$out"
}

run_host() {
  if ! command -v iperf3 >/dev/null; then
    as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iperf3 >/dev/null ||
      die "cannot install iperf3"
  fi
  iperf_port=5299
  iperf3 -s -B 127.0.0.1 -p "$iperf_port" >/dev/null 2>&1 &
  local server=$!
  trap 'kill '"$server"' 2>/dev/null || true' EXIT
  sleep 1
  echo "# host loopback, $(nproc) cores, load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# iperf3: iperf3 -s -B 127.0.0.1 -p $iperf_port; iperf3 -c 127.0.0.1 -p $iperf_port -t 3 -l SIZE -P 1|2 -J"
  echo "#   (receiver's bits/s; -l is at most 1 MiB, iperf3's limit)"
  echo "# tiercc: $bin/tiercc-transport-bench --transport tcp|ucx --mode bw --op send|write -b SIZE -e SIZE"
  echo "#   -n min(5000, max(64, 512 MiB / SIZE)) --poll $poll --json (window 64; best of $rounds runs)"
  printf '%10s %10s %10s %10s %10s %10s %10s   (Gbit/s)\n' bytes iperf3 iperf3-P2 tcp-send tcp-write ucx-send \
    ucx-write
  local s i1 i2 ts tw us uw
  for s in "${sizes[@]}"; do
    # Assigned one by one so that a failure (die in the command substitution) stops the script.
    i1=$(iperf3_gbps "$s" 1)
    i2=$(iperf3_gbps "$s" 2)
    ts=$(tiercc_gbps tcp send "$s")
    tw=$(tiercc_gbps tcp write "$s")
    us=$(tiercc_gbps ucx send "$s")
    uw=$(tiercc_gbps ucx write "$s")
    printf '%10d %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f\n' "$s" "$i1" "$i2" "$ts" "$tw" "$us" "$uw"
  done
  echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  kill "$server" 2>/dev/null || true
  trap - EXIT
}

run_vm() {
  local dir=${TIERCC_SOFTROCE_DIR:-$root/build/softroce} rc=0
  "$root/tests/softroce/build-image.sh" >/dev/null || die "cannot build the SoftRoCE VM image"
  [[ -f $bin/tiercc-transport-vs-perftest.sh ]] || die "$bin/tiercc-transport-vs-perftest.sh missing (re-run cmake)"
  echo "# SoftRoCE VM (qemu TCG, 2 vCPUs, rxe0 MTU 1024), host load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# tests/softroce/run-vm.sh --share $build -- sh $bin/tiercc-transport-vs-perftest.sh"
  echo "#   TIERCC_VS_PERFTEST_ROUNDS=$rounds (console log: $dir/compare-vm.log)"
  "$root/tests/softroce/run-vm.sh" -q --share "$build" -e "TIERCC_VS_PERFTEST_ROUNDS=$rounds" --timeout 400 \
    --log "$dir/compare-vm.log" -- sh "$bin/tiercc-transport-vs-perftest.sh" || rc=$?
  sed -n 's/^\[ *[0-9.]*\] //p' "$dir/compare-vm.log" |
    awk '/^vs-perftest: ib_write_bw/ { t = 1 } /^vs-perftest:/ || (t && /^ +[0-9a-z]/) { print }' || true
  ((rc == 0)) || die "the VM run failed (exit $rc): see $dir/compare-vm.log"
}

((host)) && run_host
((vm)) && run_vm
exit 0
