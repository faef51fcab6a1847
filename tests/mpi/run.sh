#!/usr/bin/env bash
# tiercc under a real mpirun (Debian's Open MPI), with every TIERCC_* variable removed from the
# environment, then as 2 domains of 2:
#   unique-id: joined by a unique id that the program broadcasts with MPI: examples/mpi_app.c
#              (C ABI) and from_mpi_comm.cpp (tiercc/mpi.hpp);
#   pmix:      programs that know nothing of MPI (tiercc-demo, every collective checked, and
#              examples/allreduce_c.c), joined from the environment: PMIx tells each its rank and
#              carries rank 0's unique id to all.
# Where it can, the job runs in a network namespace of its own whose one interface is
# 198.18.250.1, so that the id's store is checked to listen on the first routable address (and no
# traffic leaves it).
# Usage: run.sh BIN_DIR unique-id|pmix. Exit 77 (skipped, saying why) without what the mode needs.
set -euo pipefail
bin=$1
mode=${2:?usage: run.sh BIN_DIR unique-id|pmix}
command -v mpirun >/dev/null || { echo "skipped: no mpirun (apt-get install openmpi-bin)"; exit 77; }
if [[ $mode == unique-id && (! -x $bin/mpi_app || ! -x $bin/mpi_from_comm) ]]; then
  echo "skipped: built without MPI (apt-get install openmpi-bin libopenmpi-dev, then reconfigure)"
  exit 77
fi
if [[ $mode == pmix ]] && ! grep -q '^PMIx bootstrap: built in' <<<"$("$bin/tiercc-info" --no-devices)"; then
  echo "skipped: built without PMIx (apt-get install libpmix-dev, then reconfigure)"
  exit 77
fi

mpi=(mpirun -n 4 --oversubscribe)
[[ $(id -u) -eq 0 ]] && mpi+=(--allow-run-as-root)
# No tiercc variable at all, as a user's MPI job has none.
clean=(env)
for v in $(env | sed -n 's/^\(TIERCC_[A-Z0-9_]*\)=.*/\1/p'); do clean+=(-u "$v"); done
# Open MPI's shared-memory transport falls back to copies where cross-memory attach is refused.
export OMPI_MCA_btl_vader_single_copy_mechanism=none

where=()
ns=""
cleanup() { [[ -n $ns ]] && ip netns del "$ns" 2>/dev/null || true; }
trap cleanup EXIT
if [[ $(id -u) -eq 0 ]] && ip netns add "tcc-mpi-$$" 2>/dev/null; then
  ns="tcc-mpi-$$"
  ip -n "$ns" link set lo up
  # A veth pair with both ends inside (this kernel has no dummy interfaces).
  ip -n "$ns" link add fabric0 type veth peer name fabric0-peer
  ip -n "$ns" addr add 198.18.250.1/24 dev fabric0
  ip -n "$ns" link set fabric0-peer up
  ip -n "$ns" link set fabric0 up
  where=(ip netns exec "$ns")
else
  echo "note: no network namespace here (needs root): the store listens on loopback (TIERCC_BOOTSTRAP_ADDR)"
  clean+=(TIERCC_BOOTSTRAP_ADDR=127.0.0.1)
fi

run() {  # a command under mpirun, bounded in time
  echo "+ mpirun -n 4 $*"
  timeout 120 "${where[@]}" "${clean[@]}" "${mpi[@]}" "$@"
}

if [[ $mode == unique-id ]]; then
  run "$bin/mpi_app"
  run "$bin/mpi_from_comm"
  run -x TIERCC_DOMAIN_SIZE=2 "$bin/mpi_app"
  run -x TIERCC_DOMAIN_SIZE=2 "$bin/mpi_from_comm"
  probe=$bin/mpi_app
else
  run "$bin/allreduce_c"
  run -x TIERCC_DOMAIN_SIZE=2 "$bin/allreduce_c"
  demo=$(run -x TIERCC_DOMAIN_SIZE=2 -x TIERCC_DEBUG=INFO "$bin/tiercc-demo" 2>&1) || { echo "$demo"; exit 1; }
  echo "$demo" | grep -v ' INFO '
  grep -q "^demo: all results correct" <<<"$demo" || { echo "tiercc-demo did not report correct results"; exit 1; }
  joined=$(grep -c "joined through PMIx: rank [0-3] of 4" <<<"$demo" || true)
  ((joined == 4)) || { echo "$joined of 4 ranks joined through PMIx"; exit 1; }
  echo "4 of 4 ranks joined through PMIx"
  probe=$bin/allreduce_c
fi
if [[ -n $ns ]]; then
  log=$(run -x TIERCC_DEBUG=INFO "$probe" 2>&1)
  grep -q "hosts the unique ids' store at 198.18.250.1:" <<<"$log" ||
    { echo "the id's store did not listen on the namespace's routable address:"; echo "$log"; exit 1; }
  echo "the id's store listened on 198.18.250.1, the first routable address"
fi
echo "mpi ($mode): all runs passed"
