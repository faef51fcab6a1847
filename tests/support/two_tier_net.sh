# Sourced by the tests that run on bench/two-tier-net.sh's namespaces (tests/two_tier_net_test.sh,
# tests/multihost/): skip (ctest's 77) and fail, a check that namespaces can be made here and that
# no such network is up already, and bringing one up that is removed when the test exits.
# The sourcing script sets SRC (the source dir) first.
# shellcheck shell=bash
readonly SKIP=77
readonly NET=$SRC/bench/two-tier-net.sh

skip() {
  echo "SKIP: $*"
  exit "$SKIP"
}

fail() {
  echo "FAIL: $*"
  exit 1
}

# Skips unless this process may create network namespaces and none of the test network's exists.
require_netns() {
  [[ $(id -u) -eq 0 ]] || skip "needs root to create network namespaces"
  { command -v ip && command -v tc; } >/dev/null || skip "iproute2 (ip, tc) not installed"
  local probe=tiercc-probe-$$
  timeout 10 ip netns add "$probe" 2>/dev/null || skip "'ip netns add' fails here (no netns support or no permission)"
  timeout 10 ip netns del "$probe"
  if timeout 10 ip netns list | grep -qE '^(tiercc-fabric|tiercc-d[0-9]+)( |$)'; then
    skip "a two-tier network is already up (a benchmark running?); not touching it"
  fi
}

# Brings up 2 domains x 2 rails at RATE, removed at exit (after the command in $on_exit, if any).
two_tier_net_up() { # RATE
  trap '${on_exit:-}; "$NET" down' EXIT
  "$NET" up --domains 2 --ranks-per-domain 2 --rate "$1" || fail "cannot build the test network"
}
