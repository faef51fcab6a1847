# bench/compare/two-tier/launch.sh: the launches of bench/compare/two-tier.sh, sourced by it
# (it sets root, helpers, out, build, limit, iters, the sizes and the topology constants).
# launch() runs one library (or Gloo algorithm), one collective, one size band, once.
# shellcheck shell=bash disable=SC2154  # the variables above come from two-tier.sh

# Open MPI: one orted per domain "node" (netns-rsh), runtime traffic on the unlimited management
# net; ob1 with TCP between nodes on the rail subnet (each rank opens one TCP module per rail
# address it has and stripes large messages over them), vader inside a node. Four ranks share
# two cores here, so a rank that waits must yield the CPU or the spinning ranks starve the ones
# with work (8 B then takes 60 ms instead of 0.1 ms).
# With --single-link both rail addresses sit on one interface, and Open MPI 4.1's TCP BTL cannot
# use such an interface (whichever address it is given, it publishes one and connects from the
# other; the peers drop those connections and the job hangs). So its single-link launches run
# with the second address removed (single_address); one address reaches the whole link anyway.
ompi_common=(--allow-run-as-root --host "d0:2,d1:2" -np "$WORLD" --bind-to none
  --mca plm_rsh_agent "$helpers/netns-rsh" --mca oob_tcp_if_include 198.19.0.0/24
  --mca pml ob1 --mca btl "tcp,vader,self" --mca btl_tcp_if_include 198.18.0.0/16
  --mca mpi_yield_when_idle 1 -x GLIBC_TUNABLES)
single_address() { # del|add: the 198.18.1.<d+1> address of every domain's link0
  local d
  for ((d = 0; d < DOMAINS; d++)); do timeout 10 ip -n "tiercc-d$d" addr "$1" "198.18.1.$((d + 1))/24" dev link0; done
}
# Variant flags. HAN's stock allreduce (libnbc between nodes, 64 KiB segments) reaches 0.02 GB/s
# here; with adapt between nodes and 1 MiB segments it is the best HAN found.
ompi_variant() {
  case $1 in
    openmpi) ;;
    openmpi-rabenseifner) echo "--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 6" ;;
    openmpi-han) echo "--mca coll_han_priority 100 --mca coll_han_allreduce_up_module 1 --mca coll_han_allreduce_segsize 1048576" ;;
    openmpi-han-default) echo "--mca coll_han_priority 100" ;;
  esac
}
# MPICH (ch4:ucx): one hydra proxy per domain node, control traffic on the management bridge;
# UCX over TCP only (its shared-memory transports judge "same machine" by themselves, not by
# hostname), offered the rail devices (the same names in every namespace). UCX 1.13 puts all
# traffic to one peer on one TCP lane, so each peer pair uses one rail, chosen per launch. Inside
# a node, ch4's own shared memory. MPIR_CVAR_POLLS_BEFORE_YIELD: yield while waiting, as above.
mpich_flags=(-launcher ssh -launcher-exec "$helpers/netns-rsh" -iface tiercc-mgmt -hosts "d0:2,d1:2"
  -n "$WORLD" -genv UCX_TLS "tcp,self" -genv MPIR_CVAR_POLLS_BEFORE_YIELD 1 -genv GLIBC_TUNABLES "$TUNED_MALLOC")

# Runs a launch under timeout. Some MPICH launches hang in MPI_Finalize after the last result is
# written; once the end marker is in the log, a launch gets 20 s more and is then stopped (its
# results count, the log says so).
run_bounded() { # log command...
  local log=$1 pid grace=0
  shift
  timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1 &
  pid=$!
  current_launch=$pid # timeout is its own process group: the EXIT trap has to stop it
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if grep -qE '^# (total #wrong|Out of bounds)' "$log" && ((++grace > 20)); then
      echo "two-tier: stopped 20 s after the last result (hung at exit)" >>"$log"
      kill -TERM "$pid" 2>/dev/null || true
    fi
  done
  wait "$pid"
}
# shellcheck disable=SC2034  # read by two-tier.sh's cleanup
current_launch=""

# Bytes each rail/link interface of each domain sent, and the management interface, as
# "ns:iface tx_bytes" lines (/proc/net/dev inside the namespace).
counters() {
  local d
  for ((d = 0; d < DOMAINS; d++)); do
    ip netns exec "tiercc-d$d" awk -v d="$d" 'NR > 2 && $1 ~ /^(rail|link|mgmt)/ {
      sub(":", "", $1); print "d" d ":" $1, $10 }' /proc/net/dev
  done
}

# Per library: one launch of the benchmark program. Arguments: log json layout coll lib sizes...
# where sizes... is "first last n warm" (bytes from, bytes to, timed calls, warm-up calls); the
# sizes step by 4. Every program reports nccl-tests' size and busbw (see report.py's header).
run_tiercc() { # tiercc, tiercc-prev (--previous's build), or tiercc-linear (the linear all-to-all, asked for)
  local log=$1 json=$2 coll=$4 first=$6 last=$7 n=$8 warm=$9 bin=$build/bin algo=${TIERCC_ALGO:-}
  if [[ $5 == tiercc-prev ]]; then bin=$previous/bin; fi
  if [[ $5 == tiercc-linear ]]; then algo=alltoall:linear; fi
  GLIBC_TUNABLES="" TIERCC_TRANSPORT=tcp TIERCC_ALGO=$algo run_bounded "$log" "$bin/tiercc-run" --timeout "$limit" \
    -n "$WORLD" --domain-size "$RANKS_PER_DOMAIN" --netns-prefix tiercc-d --rail-subnet 198.18 --no-prefix \
    "$bin/tiercc-perf" --coll "$coll" -d f32 -b "$first" -e "$last" -f 4 -n "$n" -w "$warm" \
    --json "$json"
}
run_openmpi() {
  local log=$1 json=$2 layout=$3 coll=$4 lib=$5 first=$6 last=$7 n=$8 warm=$9 rc=0
  if [[ $layout == single ]]; then single_address del; fi
  # shellcheck disable=SC2046  # the variant's flags are words
  GLIBC_TUNABLES=$TUNED_MALLOC run_bounded "$log" mpirun.openmpi "${ompi_common[@]}" $(ompi_variant "$lib") \
    "$out/bin/mpi_coll_bench.openmpi" -c "$coll" -b "$first" -e "$last" -f 4 -n "$n" -w "$warm" \
    --json "$json" || rc=$?
  if [[ $layout == single ]]; then single_address add; fi
  return $rc
}
run_mpich() {
  local log=$1 json=$2 layout=$3 coll=$4 first=$6 last=$7 n=$8 warm=$9 devices=rail0,rail1
  if [[ $layout == single ]]; then devices=link0; fi
  run_bounded "$log" mpiexec.hydra "${mpich_flags[@]}" -genv UCX_NET_DEVICES $devices \
    "$out/bin/mpi_coll_bench.mpich" -c "$coll" -b "$first" -e "$last" -f 4 -n "$n" -w "$warm" \
    --json "$json"
}
# gloo-hd and gloo-ring: allreduce algorithms; gloo: gloo::alltoall (it has one algorithm).
run_gloo() {
  local log=$1 json=$2 coll=$4 lib=$5 first=$6 n=$8 warm=$9 algo=halving_doubling sizes=$SMALL
  if [[ $lib == gloo-ring ]]; then algo=ring_chunked; fi
  if [[ $first != "$SMALL" ]]; then sizes=1048576,4194304,16777216,67108864; fi
  run_bounded "$log" "$helpers/gloo-launch" "$out/bin/gloo_bench" "$out/gloo-store" "$json" \
    "$sizes" "$n" "$warm" "$coll" "$algo"
}

failures=()
# One launch of one library (or Gloo algorithm) and collective over one size band; results to
# raw/<layout>.<coll>.<lib>.<band>.<run>.json, counter deltas appended to
# raw/<layout>.<coll>.<lib>.counters.
launch() { # layout coll lib band(small|large) run
  local layout=$1 coll=$2 lib=$3 band=$4 run=$5 sizes rc=0 before
  local name="$layout.$coll.$lib.$band.$run"
  local json=$out/raw/$name.json log=$out/logs/$name.log
  if [[ $band == small ]]; then
    sizes=("$SMALL" "$SMALL" $((iters * 20)) 20)
  else
    sizes=("$LARGE_MIN" "$LARGE_MAX" "$iters" 2)
  fi
  before=$(counters)
  "run_${lib%%-*}" "$log" "$json" "$layout" "$coll" "$lib" "${sizes[@]}" || rc=$?
  # A launch stopped after its last result (exit 124/143) still counts when its results are all in.
  if [[ ! -s $json ]] || { ((rc != 0)) && ! grep -q '^two-tier: stopped' "$log"; }; then
    failures+=("$name: exit $rc, see $log")
    echo "    FAILED ($name, exit $rc); see $log" >&2
  fi
  join <(sort <<<"$before") <(counters | sort) | awk '{print $1, $3 - $2}' >>"$out/raw/$layout.$coll.$lib.counters"
}
