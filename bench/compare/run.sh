#!/usr/bin/env bash
# bench/compare/run.sh: the same f32 allreduce / allgather / all-to-all sweep on tiercc
# (tiercc-perf, with ordinary and with symmetric buffers), Open MPI and MPICH (Debian packages)
# on this one host, printed side by side in busbw, under a "machine limit" line (what one core
# copies and adds, bench/compare/machine_limit.c). Results: build/compare/{results.json,table.md,
# logs/}. See docs/performance.md.
set -euo pipefail
{ # bash reads all of this before running it, so the script can be edited during a long run

root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/bench/compare"
tuned_malloc="glibc.malloc.mmap_threshold=1073741824:glibc.malloc.trim_threshold=4294967296"

usage() {
  cat <<EOF
usage: bench/compare/run.sh [-n RANKS] [--domain-size K] [--colls LIST] [--min SIZE] [--max SIZE]
                            [--iters N] [--iters-large N] [--split SIZE] [--repeat R] [--timeout SEC]
                            [--libs LIST] [--previous DIR] [--out DIR] [--wait-idle SEC] [--no-build]
                            [--no-install]
  -n RANKS          ranks on this host (default 2)
  --domain-size K   passed to tiercc-run (default RANKS: one host is one scale-up domain)
  --colls LIST      comma-separated, from allreduce,allgather,alltoall,reduce_scatter,broadcast,
                    reduce (default the first three); rooted ones at root 0
  --min/--max SIZE  sweep bounds in bytes, K/M/G suffixes allowed (default 8 and 64M); x2 steps
  --iters N         timed iterations up to --split (default 40; warmup N/8, at least 2)
  --iters-large N   timed iterations above --split (default max(3, N/8); warmup 1)
  --split SIZE      where the large-size iteration count starts (default 1M)
  --repeat R        launches per MPI and malloc variant (default 2); tiercc gets 2R, as many as
                    each MPI; every column shows the fastest launch per size
  --timeout SEC     limit for each launch (default 240)
  --libs LIST       comma-separated, from tiercc,tiercc-sym,openmpi,mpich (default all four;
                    tiercc-sym is tiercc-perf --symmetric: buffers from allocShared, zero copy)
  --previous DIR    also run the tiercc columns with DIR/bin/tiercc-perf and tiercc-run (another
                    build, e.g. the previous commit's), taking turns with this one's launches; the
                    table adds its columns and this build's time over its time
  --out DIR         where results and logs go (default build/compare)
  --wait-idle SEC   first wait up to SEC seconds for the CPUs to be >= 90% idle (a shared host
                    makes every number here meaningless); default 0: start at once
  --no-build        use build/bin/tiercc-perf as it is (default: make its target, a no-op when
                    it is up to date)
  --no-install      do not apt-get install the MPI packages when they are missing
Environment: TIERCC_BUILD_DIR, the build directory holding bin/tiercc-perf (default build/).
Each MPI runs plain and with GLIBC_TUNABLES=$tuned_malloc
(glibc keeps big freed blocks instead of unmapping them); per size the table shows the fastest
launch and says which kind it was (p = plain, t = tuned malloc).
EOF
}

# "64M" -> 67108864 (binary units, like nccl-tests).
to_bytes() {
  local text=$1 number unit
  number=${text%%[kKmMgG]*}
  unit=${text#"$number"}
  [[ $number =~ ^[0-9]+$ ]] || { echo "bad size: $text" >&2; exit 2; }
  case $unit in
    "") echo "$number" ;;
    k | K) echo $((number << 10)) ;;
    m | M) echo $((number << 20)) ;;
    g | G) echo $((number << 30)) ;;
    *) echo "bad size: $text" >&2; exit 2 ;;
  esac
}

command_line="bench/compare/run.sh${*:+ }$*"
ranks=2 domain_size="" colls=allreduce,allgather,alltoall min=8 max=64M iters=40 iters_large=""
split=1M repeat=2 limit=240 libs=tiercc,tiercc-sym,openmpi,mpich out="$root/build/compare" build=1 install=1
wait_idle=0 previous=""
while (($#)); do
  case $1 in
    -n) ranks=$2; shift ;;
    --domain-size) domain_size=$2; shift ;;
    --colls) colls=$2; shift ;;
    --min) min=$2; shift ;;
    --max) max=$2; shift ;;
    --iters) iters=$2; shift ;;
    --iters-large) iters_large=$2; shift ;;
    --split) split=$2; shift ;;
    --repeat) repeat=$2; shift ;;
    --timeout) limit=$2; shift ;;
    --libs) libs=$2; shift ;;
    --previous) previous=$2; shift ;;
    --out) out=$2; shift ;;
    --wait-idle) wait_idle=$2; shift ;;
    --no-build) build=0 ;;
    --no-install) install=0 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
min_b=$(to_bytes "$min")
max_b=$(to_bytes "$max")
split_b=$(to_bytes "$split")
for number in "$ranks" "$domain_size" "$iters" "$iters_large" "$repeat" "$limit" "$wait_idle"; do
  [[ $number =~ ^[0-9]*$ ]] || { echo "not a number: $number" >&2; exit 2; }
done
((ranks >= 1 && iters >= 1 && repeat >= 1 && min_b >= 1 && min_b <= max_b)) || { usage >&2; exit 2; }
domain_size=${domain_size:-$ranks}
iters_large=${iters_large:-$((iters / 8 > 3 ? iters / 8 : 3))}
warmup=$((iters / 8 > 2 ? iters / 8 : 2))
IFS=, read -ra coll_list <<<"$colls"
for coll in "${coll_list[@]}"; do
  case $coll in allreduce | allgather | alltoall | reduce_scatter | broadcast | reduce) ;;
    *) echo "unknown collective: $coll" >&2; exit 2 ;;
  esac
done
want() { [[ ",$libs," == *",$1,"* ]]; }
want_tiercc() { want tiercc || want tiercc-sym; }

# The sweep in two bands, so that the large sizes run fewer iterations; every library gets the
# same bands. A band is "first last iters warmup".
if ((max_b <= split_b)); then
  bands=("$min_b $max_b $iters $warmup")
elif ((min_b > split_b)); then
  bands=("$min_b $max_b $iters_large 1")
else
  small_last=$min_b
  while ((small_last * 2 <= split_b)); do small_last=$((small_last * 2)); done
  bands=("$min_b $small_last $iters $warmup" "$((small_last * 2)) $max_b $iters_large 1")
fi

mkdir -p "$out/logs" "$out/raw" "$out/bin"
rm -f "$out"/raw/*.json "$out"/raw/*.jsonl "$out"/logs/*.log

# --- MPI packages and the MPI benchmark, built once per MPI -------------------------------------
mpi_packages=(openmpi-bin libopenmpi-dev mpich libmpich-dev)
if want openmpi || want mpich; then
  if ! command -v mpicc.openmpi >/dev/null || ! command -v mpicc.mpich >/dev/null; then
    if ((install)); then
      echo "installing ${mpi_packages[*]} (Debian)"
      timeout 900 apt-get install -y --no-install-recommends "${mpi_packages[@]}" >"$out/logs/apt.log" 2>&1 ||
        { echo "apt-get install failed; see $out/logs/apt.log" >&2; exit 1; }
    else
      echo "Open MPI or MPICH missing and --no-install given" >&2; exit 1
    fi
  fi
  for mpi in openmpi mpich; do
    binary="$out/bin/mpi_coll_bench.$mpi"
    if [[ ! -x $binary || $here/mpi_coll_bench.c -nt $binary ]]; then
      timeout 120 "mpicc.$mpi" -O2 -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra \
        -o "$binary" "$here/mpi_coll_bench.c"
    fi
  done
fi

# --- tiercc ---------------------------------------------------------------------------------
tiercc_build=${TIERCC_BUILD_DIR:-$root/build}  # another build directory: TIERCC_BUILD_DIR=...
tiercc_perf="$tiercc_build/bin/tiercc-perf"
tiercc_run="$tiercc_build/bin/tiercc-run"
if want_tiercc && ((build)) && [[ -f $tiercc_build/CMakeCache.txt ]]; then
  targets=$(timeout 60 cmake --build "$tiercc_build" --target help 2>/dev/null || true)
  if [[ $targets == *tiercc-perf* ]]; then
    echo "making tiercc-perf and tiercc-run (no-op when up to date)"
    timeout 1800 cmake --build "$tiercc_build" --target tiercc-perf tiercc-run -j 2 >"$out/logs/build.log" 2>&1 ||
      { echo "building tiercc-perf failed; see $out/logs/build.log" >&2; exit 1; }
  fi
fi
if [[ -n $previous && ! ( -x $previous/bin/tiercc-perf && -x $previous/bin/tiercc-run ) ]]; then
  echo "--previous $previous: no bin/tiercc-perf and bin/tiercc-run there" >&2
  exit 2
fi
if want_tiercc && [[ ! -x $tiercc_perf ]]; then
  echo "note: $tiercc_perf does not exist yet; the tiercc column stays empty"
fi

# --- launchers --------------------------------------------------------------------------------
# Open MPI: shared memory only (btl self,vader; pml ob1 so that UCX is not picked up), its
# runtime's TCP on loopback only, no binding (tiercc-run and MPICH's hydra do not bind either),
# --oversubscribe so that more ranks than cores start, yielding when oversubscribed.
ompi_flags=(--oversubscribe --bind-to none --mca btl "self,vader" --mca pml ob1
  --mca oob_tcp_if_include lo -x GLIBC_TUNABLES)
if (($(id -u) == 0)); then ompi_flags+=(--allow-run-as-root); fi
if ((ranks > $(nproc))); then ompi_flags+=(--mca mpi_yield_when_idle 1); fi
# MPICH (ch4:ucx in Debian 12): intra-host traffic goes through ch4's POSIX shared memory;
# UCX is held to self,sm so that it opens no network device, and hydra talks over loopback.
mpich_flags=(-iface lo)

run_bounded() { # log cmd...: run under timeout, output to the log; returns the exit status
  local log=$1
  shift
  timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1
}

failures=()
# Runs one library variant over all bands of one collective once; appends JSON lines to raw/.
run_lib() { # coll lib variant launch
  local coll=$1 lib=$2 variant=$3 launch=$4 band first last n warm i=0 rc json log
  local jsonl="$out/raw/$coll.$lib.$variant.jsonl"
  local malloc_env=""
  if [[ $variant == tuned ]]; then malloc_env=$tuned_malloc; fi
  for band in "${bands[@]}"; do
    read -r first last n warm <<<"$band"
    i=$((i + 1))
    json="$out/raw/$coll.$lib.$variant.$launch.band$i.json"
    log="$out/logs/$coll.$lib.$variant.$launch.band$i.log"
    rm -f "$json"
    rc=0
    case $lib in
      tiercc | tiercc-sym | tiercc-prev | tiercc-prev-sym)
        local symmetric=() perf=$tiercc_perf launcher=$tiercc_run
        if [[ $lib == *-sym ]]; then symmetric=(--symmetric); fi
        if [[ $lib == tiercc-prev* ]]; then perf=$previous/bin/tiercc-perf launcher=$previous/bin/tiercc-run; fi
        GLIBC_TUNABLES="" run_bounded "$log" "$launcher" -n "$ranks" --domain-size "$domain_size" \
          --timeout "$limit" \
          --no-prefix "$perf" --coll "$coll" -b "$first" -e "$last" -f 2 -n "$n" -w "$warm" \
          -d f32 --json "$json" "${symmetric[@]}" || rc=$?
        ;;
      openmpi)
        GLIBC_TUNABLES=$malloc_env OMPI_MCA_btl_vader_single_copy_mechanism=$ompi_single_copy \
          run_bounded "$log" mpirun.openmpi "${ompi_flags[@]}" -np "$ranks" \
          "$out/bin/mpi_coll_bench.openmpi" -c "$coll" -b "$first" -e "$last" -f 2 -n "$n" \
          -w "$warm" --json "$json" || rc=$?
        ;;
      mpich)
        GLIBC_TUNABLES=$malloc_env UCX_TLS=self,sm \
          run_bounded "$log" mpiexec.hydra "${mpich_flags[@]}" -n "$ranks" \
          "$out/bin/mpi_coll_bench.mpich" -c "$coll" -b "$first" -e "$last" -f 2 -n "$n" \
          -w "$warm" --json "$json" || rc=$?
        ;;
    esac
    if ((rc != 0)) || [[ ! -s $json ]]; then
      failures+=("$coll $lib $variant launch $launch, $first..$last B: exit $rc, see $log")
      echo "  FAILED: $coll $lib ($variant) $first..$last B, exit $rc; see $log" >&2
    fi
    if [[ -f $json ]]; then cat "$json" >>"$jsonl"; fi
  done
}

# Open MPI's shared memory copies large messages with CMA (process_vm_readv), which containers
# often forbid; probe once and fall back to copy-in/copy-out if it fails.
ompi_single_copy=n/a
if want openmpi; then
  ompi_single_copy=cma
  if ! GLIBC_TUNABLES="" OMPI_MCA_btl_vader_single_copy_mechanism=cma \
    timeout 60 mpirun.openmpi "${ompi_flags[@]}" -np 2 "$out/bin/mpi_coll_bench.openmpi" \
    -c alltoall -b 1M -e 1M -n 1 -w 0 >"$out/logs/openmpi-probe.log" 2>&1; then
    ompi_single_copy=none
    echo "Open MPI: CMA single copy failed here (see $out/logs/openmpi-probe.log); using none"
  fi
fi

# The machine limit: what one core copies (memcpy) and adds (c = a + b, f32) at 64 MiB, before
# and after the sweep; the report takes the better of the two.
machine_limit() { # output file
  local binary="$out/bin/machine_limit"
  if [[ ! -x $binary || $here/machine_limit.c -nt $binary ]]; then
    timeout 120 cc -O3 -march=native -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra \
      -o "$binary" "$here/machine_limit.c" || return 0
  fi
  timeout 120 "$binary" -s $((64 << 20)) -n 10 >>"$1" || true
}

# "busy idle" CPU time of all cores so far, in clock ticks, from /proc/stat.
cpu_ticks() {
  local _cpu user nice sys idle iowait irq softirq steal _rest
  read -r _cpu user nice sys idle iowait irq softirq steal _rest </proc/stat
  echo "$((user + nice + sys + irq + softirq + steal)) $((idle + iowait))"
}
# Percent of CPU time idle over the next two seconds.
cpu_idle_pct() {
  local busy0 idle0 busy1 idle1
  read -r busy0 idle0 <<<"$(cpu_ticks)"
  sleep 2
  read -r busy1 idle1 <<<"$(cpu_ticks)"
  echo $((100 * (idle1 - idle0) / (busy1 - busy0 + idle1 - idle0 > 0 ? busy1 - busy0 + idle1 - idle0 : 1)))
}
# CPU time (1/100 s) used by this script's finished children, MPI ranks included, from the
# output of `times`, which has to run in this shell (a subshell starts from zero).
children_cpu_centis() { # file written by `times`
  tail -n1 "$1" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] }
                         printf "%d\n", s * 100 }'
}
idle_before=$(cpu_idle_pct)
deadline=$((SECONDS + wait_idle))
while ((idle_before < 90 && SECONDS < deadline)); do
  echo "waiting for an idle host: CPUs ${idle_before}% idle"
  sleep 4
  idle_before=$(cpu_idle_pct)
done
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date +%s)
read -r busy_start idle_start <<<"$(cpu_ticks)"
times >"$out/logs/times.log"
ours_start=$(children_cpu_centis "$out/logs/times.log")
rm -f "$out/raw/machine.jsonl"
machine_limit "$out/raw/machine.jsonl"
echo "sweep ${min_b}..${max_b} B x2, $ranks ranks (tiercc domain size $domain_size) on $(hostname)," \
  "$(nproc) cores, CPUs ${idle_before}% idle, load $load_before"
for band in "${bands[@]}"; do
  read -r first last n warm <<<"$band"
  echo "  band $first..$last B: $n iterations, $warm warmup"
done
# Libraries take turns, so that a burst of load elsewhere hits them alike.
for coll in "${coll_list[@]}"; do
  echo "== $coll"
  for ((r = 1; r <= repeat; r++)); do
    for variant in plain tuned; do
      for lib in tiercc tiercc-prev tiercc-sym tiercc-prev-sym; do
        want "${lib/-prev/}" && [[ -x $tiercc_perf ]] || continue
        [[ $lib != tiercc-prev* || -n $previous ]] || continue
        launch=$((2 * r - 1))
        if [[ $variant == tuned ]]; then launch=$((2 * r)); fi
        echo "  $lib, launch $launch"
        run_lib "$coll" "$lib" plain "$launch"
      done
      for lib in openmpi mpich; do
        want "$lib" || continue
        echo "  $lib ($variant), launch $r"
        run_lib "$coll" "$lib" "$variant" "$r"
      done
    done
  done
done
# How much of the machine other processes took while the sweep ran: all busy time minus ours.
read -r busy_end idle_end <<<"$(cpu_ticks)"
times >"$out/logs/times.log"
ours=$(($(children_cpu_centis "$out/logs/times.log") - ours_start))
ticks=$(getconf CLK_TCK)
total=$(((busy_end - busy_start + idle_end - idle_start) * 100 / ticks))
others=$(((busy_end - busy_start) * 100 / ticks - ours))
others_pct=$((total > 0 && others > 0 ? 100 * others / total : 0))
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
machine_limit "$out/raw/machine.jsonl"

# --- report -----------------------------------------------------------------------------------
versions=()
if want_tiercc; then
  versions+=("tiercc $(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)")
  if [[ -n $previous ]]; then versions+=("previous: $previous"); fi
fi
if want openmpi; then
  versions+=("Open MPI $(mpirun.openmpi --version 2>/dev/null | awk 'NR == 1 {print $NF}')")
fi
if want mpich; then
  versions+=("MPICH $(mpichversion 2>/dev/null | awk -F'\t' '/Version/ {gsub(/ /, "", $2); print $2}')")
fi
mpi_versions=$(printf '%s, ' "${versions[@]}")
mpi_versions=${mpi_versions%, }
report_rc=0 # non-zero when a result was wrong
python3 "$here/report.py" --raw "$out/raw" --out "$out" --colls "$colls" --ranks "$ranks" \
  --domain-size "$domain_size" --command "$command_line" --versions "$mpi_versions" \
  --load-before "$load_before" --load-after "$load_after" --cores "$(nproc)" \
  --seconds "$(($(date +%s) - started))" --repeat "$repeat" --ompi-single-copy "$ompi_single_copy" \
  --idle-before "$idle_before" --others-pct "$others_pct" \
  --bands "$(printf '%s;' "${bands[@]}")" || report_rc=$?
if ((${#failures[@]})); then
  printf 'failed launches:\n' >&2
  printf '  %s\n' "${failures[@]}" >&2
fi
((${#failures[@]} == 0 && report_rc == 0))
exit
}
