#!/usr/bin/env bash
# Runs tiercc-demo across real network namespaces: 2 domains x 2 ranks on bench/two-tier-net.sh's
# rail-optimised network (200mbit rails), TCP scale-out, and checks the results and the rails used.
# Usage: tests/two_tier_net_test.sh SOURCE_DIR BIN_DIR. Exit 77 (ctest SKIP) without root or netns.
set -uo pipefail

readonly SKIP=77
readonly SRC=${1:?usage: two_tier_net_test.sh SOURCE_DIR BIN_DIR}
readonly BIN=${2:?usage: two_tier_net_test.sh SOURCE_DIR BIN_DIR}
readonly NET=$SRC/bench/two-tier-net.sh

skip() {
  echo "SKIP: $*"
  exit "$SKIP"
}

fail() {
  echo "FAIL: $*"
  exit 1
}

[[ $(id -u) -eq 0 ]] || skip "needs root to create network namespaces"
{ command -v ip && command -v tc; } >/dev/null || skip "iproute2 (ip, tc) not installed"
probe=tiercc-probe-$$
timeout 10 ip netns add "$probe" 2>/dev/null || skip "'ip netns add' fails here (no netns support or no permission)"
timeout 10 ip netns del "$probe"
if timeout 10 ip netns list | grep -qE '^(tiercc-fabric|tiercc-d[0-9]+)( |$)'; then
  skip "a two-tier network is already up (a benchmark running?); not touching it"
fi

trap '"$NET" down' EXIT
"$NET" up --domains 2 --ranks-per-domain 2 --rate 200mbit || fail "cannot build the test network"

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
