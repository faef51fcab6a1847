#!/usr/bin/env bash
# tiercc under Open MPI's mpirun across two fake nodes, with no tiercc variable set: each node is
# a network namespace of bench/two-tier-net.sh's rail-optimised network (2 domains x 2 rails)
# with a hostname of its own (bench/compare/two-tier/netns-rsh, mpirun's rsh agent, starts each
# node's orted in it). fromEnv joins through PMIx; the ranks find 2 domains by hostname. Then one
# domain of 4 that spans both nodes (TIERCC_DOMAIN_SIZE=4): its scale-up tier must be the
# emulated one (over the scale-out transport), chosen with nothing forcing it. Then TCP with one
# NIC per rail (TIERCC_SOCKET_IFNAME=rail*), checked by tiercc-info and by each rail's counters,
# and TCP with no address set (off loopback, as the job spans hosts).
# Usage: mpirun_two_nodes.sh SOURCE_DIR BIN_DIR. Exit 77 (ctest SKIP) saying why, without root,
# network namespaces, mpirun or PMIx.
set -uo pipefail

readonly SRC=${1:?usage: mpirun_two_nodes.sh SOURCE_DIR BIN_DIR}
readonly BIN=${2:?usage: mpirun_two_nodes.sh SOURCE_DIR BIN_DIR}
# shellcheck source=../support/two_tier_net.sh
source "$SRC/tests/support/two_tier_net.sh"

require_netns
command -v mpirun >/dev/null || skip "no mpirun (apt-get install openmpi-bin)"
info=$("$BIN/tiercc-info" --no-devices) || fail "tiercc-info failed: $info"
grep -q '^PMIx bootstrap: built in' <<<"$info" ||
  skip "built without PMIx (apt-get install libpmix-dev, then reconfigure)"
two_tier_net_up 1gbit

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

# One NIC per rail over TCP: TIERCC_SOCKET_IFNAME=rail* gives local rank r the node's rail r.
# tiercc-info shows each rank's choice, and every rail of both nodes carries its share.
tx_bytes() { ip -n "tiercc-d$1" -s link show dev "rail$2" | awk '/TX:/ { getline; print $1; exit }'; }
info=$(timeout 60 "${clean[@]}" "${mpi[@]}" -x TIERCC_TRANSPORT=tcp -x 'TIERCC_SOCKET_IFNAME=rail*' \
  "$BIN/tiercc-info" --no-devices 2>&1) || { echo "$info"; fail "tiercc-info across 2 nodes failed"; }
grep '^rank [0-3] of 4' <<<"$info"
for r in 0 1 2 3; do
  l=$((r % 2)) d=$((r / 2))
  grep -qE "^rank $r of 4: domain $d, local rank $l of 2, host d$d; scale-out tcp at 198\.18\.$l\.$((d + 1)):[0-9]+ \(rail$l, " \
    <<<"$info" || fail "tiercc-info does not show rank $r on rail$l (198.18.$l.$((d + 1)))"
done
declare -A before
for d in 0 1; do for l in 0 1; do before[$d$l]=$(tx_bytes $d $l); done; done
out=$(run_demo -x TIERCC_TRANSPORT=tcp -x 'TIERCC_SOCKET_IFNAME=rail*') || { echo "$out"; fail "tcp on the rails failed"; }
grep -q "^demo: all results correct" <<<"$out" || { echo "$out"; fail "tcp on the rails: wrong results"; }
for d in 0 1; do
  for l in 0 1; do
    sent=$(($(tx_bytes $d $l) - before[$d$l]))
    echo "node d$d rail$l sent $sent bytes"
    ((sent > 10000000)) || fail "node d$d rail$l carried only $sent bytes: not every NIC was used"
  done
done

# TCP with nothing set: a job that spans hosts listens on the first routable address, not loopback.
out=$(run_demo -x TIERCC_TRANSPORT=tcp) || { echo "$out"; fail "tcp with no address set failed across nodes"; }
grep -q "^demo: all results correct" <<<"$out" || { echo "$out"; fail "tcp by default: wrong results"; }
grep -q "tcp transport listens on .*(the first routable address: the job spans hosts)" <<<"$out" ||
  { echo "$out"; fail "tcp did not say it chose the first routable address"; }
echo "tcp: one NIC per rail with TIERCC_SOCKET_IFNAME, and off loopback by default across hosts"
echo "PASS"
