#!/usr/bin/env bash
# torchrun across two fake nodes: bench/two-tier-net.sh's namespaces tiercc-d0 and tiercc-d1,
# each with a hostname of its own (d0, d1), one torchrun agent per node (--nnodes 2
# --nproc_per_node 2, c10d rendezvous at node d0's management address), training
# examples/torch/ddp_train.py on the tiercc backend. No tiercc variable is set: the ranks find 2
# domains by hostname, and the loss must fall.
# Usage: torchrun_two_nodes.sh SOURCE_DIR BUILD_DIR. Exit 77 (ctest SKIP) saying why, without
# root, network namespaces, torch or the tiercc backend.
set -uo pipefail

readonly SRC=${1:?usage: torchrun_two_nodes.sh SOURCE_DIR BUILD_DIR}
readonly BUILD=${2:?usage: torchrun_two_nodes.sh SOURCE_DIR BUILD_DIR}
readonly PY=/usr/bin/python3  # Debian's, which sees python3-torch
# shellcheck source=../support/two_tier_net.sh
source "$SRC/tests/support/two_tier_net.sh"

require_netns
[[ -d $BUILD/python/tiercc ]] ||
  skip "the PyTorch backend is not built (TIERCC_WITH_TORCH; apt-get install python3-torch libtorch-dev)"
"$PY" -c 'import torch.distributed.run' 2>/dev/null || skip "$PY cannot import torch.distributed.run"
logs=$(mktemp -d)
on_exit='rm -rf "$logs"'
two_tier_net_up 1gbit

clean=(env PYTHONPATH="$BUILD/python" OMP_NUM_THREADS=1)
for v in $(env | sed -n 's/^\(TIERCC_[A-Z0-9_]*\|MASTER_ADDR\|MASTER_PORT\|RANK\|WORLD_SIZE\|LOCAL_RANK\)=.*/\1/p'); do
  clean+=(-u "$v")
done
# torchrun resolves the nodes' hostnames: each node sees a hosts file of the job's own (bind-
# mounted over /etc/hosts in a mount namespace of its own, so the host's file is untouched).
printf '127.0.0.1 localhost\n198.19.0.2 d0\n198.19.0.3 d1\n' >"$logs/hosts"
node() {  # D: torchrun agent of node dD, in its namespace with hostname dD
  # shellcheck disable=SC2016  # expanded by the node's shell
  timeout 240 ip netns exec "tiercc-d$1" unshare --uts --mount sh -c \
    'hostname "$1" && mount --bind "$2" /etc/hosts && shift 2 && exec "$@"' node "d$1" "$logs/hosts" \
    "${clean[@]}" "$PY" -m torch.distributed.run --nnodes 2 --nproc_per_node 2 --node_rank "$1" \
    --rdzv_backend c10d --rdzv_endpoint 198.19.0.2:29400 --rdzv_id tiercc-two-nodes \
    --redirects 2 --tee 2 --log_dir "$logs/d$1" \
    "$SRC/examples/torch/ddp_train.py" --steps 12 >"$logs/node$1.out" 2>&1
}
node 0 &
first=$!
node 1
second=$?
wait "$first"
first=$?
for d in 0 1; do
  echo "--- node d$d"
  grep -vE '^\s*$' "$logs/node$d.out" | tail -n 20
done
((first == 0 && second == 0)) || fail "torchrun exited with $first (node d0) and $second (node d1)"
out=$(cat "$logs/node0.out" "$logs/node1.out")
grep -q "domain 0 of 2 (2 ranks)" <<<"$out" || fail "the ranks did not find 2 domains of 2 (by hostname)"
mapfile -t losses < <(sed -n 's/.* loss \([0-9.]*\).*/\1/p' <<<"$out")
((${#losses[@]} == 12)) || fail "expected 12 loss lines, got ${#losses[@]}"
awk -v a="${losses[0]}" -v b="${losses[11]}" 'BEGIN { exit !(b < a) }' ||
  fail "the loss did not fall: ${losses[0]} -> ${losses[11]}"
echo "torchrun on 2 nodes: 2 domains by hostname, loss ${losses[0]} -> ${losses[11]}"
echo "PASS"
