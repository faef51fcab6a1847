#!/bin/sh
# Runs inside tiercc's SoftRoCE VM: runs COMMAND and fails unless it also made rxe0 send packets,
# so that a check meant for RDMA cannot pass by quietly falling back to another transport.
# usage: expect-rdma-traffic.sh COMMAND [ARGS...]
counter=/sys/class/infiniband/${SOFTROCE_DEV:-rxe0}/ports/1/hw_counters/sent_pkts
before=$(cat "$counter") || exit 1
"$@"
rc=$?
sent=$(($(cat "$counter") - before))
echo "expect-rdma-traffic: ${SOFTROCE_DEV:-rxe0} sent $sent packets"
[ "$rc" = 0 ] || exit "$rc"
if [ "$sent" -le 0 ]; then
  echo "expect-rdma-traffic: FAIL: the command passed without any RDMA traffic"
  exit 1
fi
