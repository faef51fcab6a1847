#!/usr/bin/env bash
# Runs tiercc-demo across real network namespaces: 2 domains x 2 ranks on bench/two-tier-net.sh's
# rail-optimised network (200mbit rails), TCP scale-out, and checks the results and the rails used.
# Usage: tests/two_tier_net_test.sh SOURCE_DIR BIN_DIR. Exit 77 (ctest SKIP) without root or netns.
set -uo pipefail

readonly SRC=${1:?usage: two_tier_net_test.sh SOURCE_DIR BIN_DIR}
readonly BIN=${2:?usage: two_tier_net_test.sh SOURCE_DIR BIN_DIR}
# shellcheck source=support/two_tier_net.sh
source "$SRC/tests/support/two_tier_net.sh"

require_netns
two_tier_net_up 200mbit

run_job() {
  TIERCC_TRANSPORT=tcp timeout 40 "$BIN/tiercc-run" --timeout 30 -n 4 --domain-size 2 \
    --netns-prefix tiercc-d --rail-subnet 198.18 "$@"
}

# Each rank runs in its domain's namespace with its rail address and the store on the management net.
# shellcheck disable=SC2016  # expanded by the rank's shell
env_out=$(run_job sh -c 'echo $TIERCC_DOMAIN_ID $TIERCC_SOCKET_IFADDR ${TIERCC_STORE%:*} $(ip -o link show | grep -c " rail")') ||
  fail "the environment probe failed: $env_out"
echo "$env_out"
for expected in "[r0.d0] 0 198.18.0.1 198.19.0.1 2" "[r1.d0] 0 198.18.1.1 198.19.0.1 2" \
  "[r2.d1] 1 198.18.0.2 198.19.0.1 2" "[r3.d1] 1 198.18.1.2 198.19.0.1 2"; do
  grep -qxF "$expected" <<<"$env_out" || fail "expected the line '$expected'"
done

demo_out=$(run_job "$BIN/tiercc-demo" 2>&1)
status=$?
echo "$demo_out" | tail -n 20
((status == 0)) || fail "tiercc-demo exited with $status"
grep -q "demo: all results correct" <<<"$demo_out" || fail "tiercc-demo did not report correct results"

# The scale-out traffic went over every rail of both domains (not just neighbour discovery).
for ns in tiercc-d0 tiercc-d1; do
  for rail in rail0 rail1; do
    sent=$(ip netns exec "$ns" tc -s qdisc show dev "$rail" | awk '/Sent/ {print $2; exit}')
    echo "$ns $rail sent ${sent:-0} bytes"
    ((${sent:-0} > 1000000)) || fail "$ns $rail carried only ${sent:-0} bytes"
  done
done
echo "PASS"
