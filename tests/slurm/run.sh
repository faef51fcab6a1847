#!/usr/bin/env bash
# Slurm on this machine, for the length of one test: Debian's munged, slurmctld and slurmd (one
# node, 4 CPUs declared), all on loopback with a config this script writes into a scratch dir
# (ports the kernel hands out), then `srun -n 4 --mpi=pmix` of tiercc-demo (every collective
# checked) and of allreduce_c, with every TIERCC_* variable removed: fromEnv joins through PMIx.
# Everything it started is stopped at the end. Usage: run.sh BIN_DIR. Exit 77 (ctest SKIP) with
# the reason where Slurm or PMIx is missing or cannot run here.
set -uo pipefail
readonly SKIP=77
bin=${1:?usage: run.sh BIN_DIR}

skip() {
  echo "SKIP: $*"
  exit "$SKIP"
}
fail() {
  echo "FAIL: $*"
  for f in "$dir"/*.log; do [[ -f $f ]] && { echo "--- $f"; tail -n 30 "$f"; }; done
  exit 1
}

for tool in slurmctld slurmd srun munged; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (apt-get install slurmd slurmctld slurm-client munge)"
done
[[ $(id -u) -eq 0 ]] || skip "needs root to run slurmd here"
[[ -n $(compgen -G "/usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix*.so") ]] || skip "Slurm has no mpi_pmix plugin"
grep -q '^PMIx bootstrap: built in' <<<"$("$bin/tiercc-info" --no-devices)" ||
  skip "built without PMIx (apt-get install libpmix-dev, then reconfigure)"

dir=$(mktemp -d /tmp/tiercc-slurm.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  rm -rf "$dir"
}
trap cleanup EXIT
mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"

# Free ports, as the kernel hands them out (bound, then released: Slurm takes numbers).
read -r ctld_port slurmd_port srun_lo < <(/usr/bin/python3 -c '
import socket
s = [socket.socket() for _ in range(3)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

# A munge key of this test's own, and munged on a socket of its own.
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 600 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.sock" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/seed" ||
  skip "munged does not start here (see above)"
for _ in $(seq 50); do [[ -f $dir/munge/munged.pid ]] && break; sleep 0.1; done
pids+=("$(cat "$dir/munge/munged.pid")")

cat >"$dir/slurm.conf" <<CONF
ClusterName=tiercc-test
SlurmctldHost=$(hostname -s)(127.0.0.1)
MailProg=/bin/true
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SrunPortRange=$srun_lo-$((srun_lo + 20))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=tiercc-node NodeAddr=127.0.0.1 NodeHostname=$(hostname) CPUs=4 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=10 State=UP OverSubscribe=FORCE
CONF
export SLURM_CONF=$dir/slurm.conf

slurmctld -D -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N tiercc-node -f "$SLURM_CONF" >"$dir/slurmd.out" 2>&1 &
pids+=($!)
ready=0
for _ in $(seq 100); do
  if sinfo -h -N -o '%T' 2>/dev/null | grep -qE '^(idle|mixed)'; then ready=1; break; fi
  kill -0 "${pids[1]}" 2>/dev/null && kill -0 "${pids[2]}" 2>/dev/null || break
  sleep 0.2
done
if ((ready == 0)); then
  cat "$dir/slurmctld.out" "$dir/slurmd.out"
  tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" 2>/dev/null
  skip "Slurm's daemons do not come up here (their logs are above)"
fi
echo "slurm: slurmctld and slurmd up on 127.0.0.1:$ctld_port/$slurmd_port, node $(sinfo -h -N -o '%N %T %c')"

clean=(env)
for v in $(env | sed -n 's/^\(TIERCC_[A-Z0-9_]*\)=.*/\1/p'); do clean+=(-u "$v"); done
run() {  # srun options and command
  echo "+ srun -n 4 --mpi=pmix $*"
  timeout 120 "${clean[@]}" srun -n 4 --mpi=pmix --time=5 "$@"
}

out=$(run "$bin/allreduce_c" 2>&1) || { echo "$out"; fail "allreduce_c under srun failed"; }
echo "$out"
ok=$(grep -c "sum of ranks = 6 (expected 6)" <<<"$out" || true)
((ok == 4)) || fail "$ok of 4 ranks printed the expected sum"

out=$(run --export=ALL,TIERCC_DOMAIN_SIZE=2,TIERCC_DEBUG=INFO "$bin/tiercc-demo" 2>&1) ||
  { echo "$out"; fail "tiercc-demo under srun failed"; }
echo "$out" | grep -v ' INFO '
grep -q "^demo: all results correct" <<<"$out" || fail "tiercc-demo did not report correct results"
joined=$(grep -c "joined through PMIx: rank [0-3] of 4" <<<"$out" || true)
((joined == 4)) || fail "$joined of 4 ranks joined through PMIx"
echo "srun --mpi=pmix: 4 of 4 ranks joined through PMIx, all results correct"
echo "PASS"
