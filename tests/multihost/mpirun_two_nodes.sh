#!/usr/bin/env bash
# tiercc under Open MPI's mpirun across two fake nodes, with no tiercc variable set: each node is
# a network namespace of bench/two-tier-net.sh's rail-optimised network (2 domains x 2 rails)
# with a hostname of its own (bench/compare/two-tier/netns-rsh, mpirun's rsh agent, starts each
# node's orted in it). fromEnv joins through PMIx; the ranks find 2 domains by hostname. Then one
# domain of 4 that spans both nodes (TIERCC_DOMAIN_SIZE=4): its scale-up tier must be the
# emulated one (over the scale-out transport), chosen with nothing forcing it.
# Usage: mpirun_two_nodes.sh SOURCE_DIR BIN_DIR. Exit 77 (ctest SKIP) saying why, without root,
# network namespaces, mpirun or PMIx.
set -uo pipefail

readonly SKIP=77
readonly SRC=${1:?usage: mpirun_two_nodes.sh SOURCE_DIR BIN_DIR}
readonly BIN=${2:?usage: mpirun_two_nodes.sh SOURCE_DIR BIN_DIR}
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
command -v mpirun >/dev/null || skip "no mpirun (apt-get install openmpi-bin)"
info=$("$BIN/tiercc-info" --no-devices) || fail "tiercc-info failed: $info"
grep -q '^PMIx bootstrap: built in' <<<"$info" ||
  skip "built without PMIx (apt-get install libpmix-dev, then reconfigure)"
probe=tiercc-probe-$$
timeout 10 ip netns add "$probe" 2>/dev/null || skip "'ip netns add' fails here (no netns support or no permission)"
timeout 10 ip netns del "$probe"
if timeout 10 ip netns list | grep -qE '^(tiercc-fabric|tiercc-d[0-9]+)( |$)'; then
  skip "a two-tier network is already up (a benchmark running?); not touching it"
fi

trap '"$NET" down' EXIT
"$NET" up --domains 2 --ranks-per-domain 2 --rate 1gbit || fail "cannot build the test network"

clean=(env)  # no tiercc variable at all, as on a cluster
for v in $(env | sed -n 's/^\(TIERCC_[A-Z0-9_]*\)=.*/\1/p'); do clean+=(-u "$v"); done
# d0 and d1 are the nodes; mpirun's own traffic takes the management net.
mpi=(mpirun --allow-run-as-root --host d0:2,d1:2 -np 4 --bind-to none
  --mca plm_rsh_agent "$SRC/bench/compare/two-tier/netns-rsh" --mca oob_tcp_if_include 198.19.0.0/24)

run_demo() {  # extra mpirun options...
  echo "+ mpirun -np 4 --host d0:2,d1:2 $* tiercc-demo"
  timeout 120 "${clean[@]}" "${mpi[@]}" -x TIERCC_DEBUG=INFO "$@" "$BIN/tiercc-demo" 2>&1
}

out=$(run_demo) || { echo "$out"; fail "tiercc-demo across 2 nodes failed"; }
echo "$out" | grep -v ' INFO '
grep -q "^demo: all results correct" <<<"$out" || fail "tiercc-demo did not report correct results"
joined=$(grep -c "joined through PMIx" <<<"$out" || true)
((joined == 4)) || fail "$joined of 4 ranks joined through PMIx"
for r in 0 1 2 3; do
  node=d$((r / 2))
  grep -qE "^$node:[0-9]+:r$r tiercc INFO INIT communicator ready: rank $r of 4, 2 domains x 2 ranks, scale-up shm" \
    <<<"$out" || fail "rank $r did not report 2 domains x 2 ranks with shm on node $node"
done
echo "2 nodes: 4 of 4 ranks joined through PMIx, 2 domains by hostname, all results correct"

out=$(run_demo -x TIERCC_DOMAIN_SIZE=4) || { echo "$out"; fail "one domain across 2 nodes failed"; }
grep -q "^demo: all results correct" <<<"$out" || { echo "$out"; fail "the spanning domain's results are wrong"; }
emulated=$(grep -c "communicator ready: rank [0-3] of 4, 1 domain x 4 ranks, scale-up emulated" <<<"$out" || true)
((emulated == 4)) || { echo "$out"; fail "$emulated of 4 ranks took the emulated scale-up tier"; }
echo "a domain across 2 nodes: 4 of 4 ranks chose the emulated scale-up tier, all results correct"
echo "PASS"
