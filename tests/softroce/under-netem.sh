#!/bin/sh
# Runs inside tiercc's SoftRoCE VM: runs COMMAND while netem drops 1% of the packets on lo and
# reorders a quarter of them (1 ms delay for the rest), so the TCP scale-out tier and the store
# see loss and reordering; fails if COMMAND fails or netem dropped nothing (a check that did not
# go through the lossy link proves nothing). The host's kernel has no netem: this is where it runs.
# usage: under-netem.sh COMMAND [ARGS...]
tc=/usr/sbin/tc
$tc qdisc replace dev lo root netem delay 1ms reorder 25% 50% loss 1% || {
  echo "under-netem: FAIL: cannot add a netem qdisc on lo"
  exit 1
}
# Tests whose deadlines assume a clean link widen them (fault_matrix_test: a store round trip can
# wait out TCP's retransmission timeouts here).
TIERCC_TEST_LOSSY_LINK=1 "$@"
rc=$?
stats=$($tc -s qdisc show dev lo)
$tc qdisc del dev lo root
echo "under-netem: $stats" | tr '\n' ' '
echo
dropped=$(echo "$stats" | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | head -n 1)
[ "$rc" = 0 ] || exit "$rc"
if [ "${dropped:-0}" -le 0 ]; then
  echo "under-netem: FAIL: netem dropped no packet"
  exit 1
fi
