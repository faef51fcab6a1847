#!/bin/sh
# Runs inside tiercc's SoftRoCE VM (busybox sh): shows the RDMA device, then runs each check given
# as NAME=COMMAND (a sh command line), one after the other, each bounded in time; fails if any fails.
# usage: in-vm.sh [NAME=COMMAND]...      TIERCC_VM_CHECK_TIMEOUT: seconds per check (default 240)
# The VM exists so that RDMA tests run: a check whose output has GoogleTest's "[  SKIPPED ]" fails.
check_timeout=${TIERCC_VM_CHECK_TIMEOUT:-240}
device=${SOFTROCE_DEV:-rxe0}
uptime_s() { cut -d' ' -f1 /proc/uptime; }
rxe_sent() { cat "/sys/class/infiniband/$device/ports/1/hw_counters/sent_pkts" 2>/dev/null || echo 0; }

echo "=== ibv_devinfo -d $device"
ibv_devinfo -d "$device"
echo "RoCE v2 GID: index $SOFTROCE_GID_INDEX = $(cat "/sys/class/infiniband/$device/ports/1/gids/$SOFTROCE_GID_INDEX")"

passed=0 failed=0 failed_names=
for check in "$@"; do
  name=${check%%=*}
  command=${check#*=}
  echo "=== $name: $command"
  started=$(uptime_s) sent_before=$(rxe_sent)
  { timeout "$check_timeout" sh -c "$command"; echo $? >/tmp/check.rc; } 2>&1 | tee /tmp/check.out
  rc=$(cat /tmp/check.rc)
  seconds=$(awk "BEGIN { printf \"%.1f\", $(uptime_s) - $started }")
  stats="${seconds}s, rxe0 sent $(($(rxe_sent) - sent_before)) packets"
  why="exit $rc"
  [ "$rc" = 143 ] && why="killed after ${check_timeout}s"
  if [ "$rc" = 0 ] && grep -q '\[  SKIPPED \]' /tmp/check.out; then
    rc=1 why="tests were skipped"
  fi
  if [ "$rc" = 0 ]; then
    passed=$((passed + 1))
    echo "in-vm: PASS $name ($stats)"
  else
    failed=$((failed + 1)) failed_names="$failed_names $name"
    echo "in-vm: FAIL $name ($why, $stats)"
  fi
done
echo "in-vm: $passed passed, $failed failed${failed_names:+ (failed:$failed_names)}"
[ "$failed" = 0 ]
