#!/usr/bin/env bash
# bench/compare/two-tier.sh: f32 sum allreduce and f32 all-to-all, 2 domains x 2 ranks, on
# bench/two-tier-net.sh's rate-limited two-tier network, for tiercc, Open MPI 4.1 (default tuned;
# for allreduce also forced Rabenseifner and HAN), MPICH 4.0 and Gloo, all on the same network in
# one run, next to the bound the links allow. Launches: bench/compare/two-tier/launch.sh.
# Every peer sees one "node" per domain (bench/compare/two-tier/netns-rsh), so that traffic between
# domains crosses the links; per-interface traffic counters show it did. See docs/performance.md.
set -euo pipefail
{ # bash reads all of this before running it, so the script can be edited during a long run

root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/bench/compare
helpers=$here/two-tier
net=$root/bench/two-tier-net.sh
readonly DOMAINS=2 RANKS_PER_DOMAIN=2 WORLD=4
readonly LARGE_MIN=1M LARGE_MAX=64M SMALL=8
# MPIs map and unmap a scratch buffer per call with glibc's defaults and collapse at 64 MiB.
readonly TUNED_MALLOC=glibc.malloc.mmap_threshold=1073741824:glibc.malloc.trim_threshold=4294967296
ALL_LIBS=tiercc,openmpi,openmpi-rabenseifner,openmpi-han,mpich,gloo

usage() {
  cat <<EOF
usage: bench/compare/two-tier.sh [--rate RATE] [--layouts rails,single] [--colls LIST] [--libs LIST]
                                 [--iters N] [--repeat R] [--timeout SEC] [--out DIR] [--build DIR]
                                 [--previous DIR] [--no-install]
  --rate RATE     each link's rate per direction (tc spelling: 4gbit, 500mbit; default 4gbit)
  --layouts LIST  rails (one link per local rank) and/or single (--single-link); default both
  --colls LIST    allreduce (8 B and 1..64 MiB) and/or alltoall (1..64 MiB); default both.
                  alltoall runs tiercc, openmpi (tuned), mpich and gloo (gloo::alltoall); the
                  other Open MPI variants are allreduce-only
  --libs LIST     from $ALL_LIBS,openmpi-han-default,tiercc-linear (default: $ALL_LIBS;
                  openmpi-han-default is HAN with its stock libnbc/64 KiB-segment settings;
                  tiercc-linear: tiercc with TIERCC_ALGO=alltoall:linear, alltoall only;
                  gloo: allreduce halving-doubling and ring-chunked, two columns, and
                  gloo::alltoall)
  --iters N       timed calls per size from 1 MiB (default 10); 8 B gets 20 N
  --repeat R      launches per library, collective, size band and layout (default 2); best kept
  --timeout SEC   limit for each launch (default 300)
  --out DIR       results, logs, binaries (default build/two-tier-compare)
  --build DIR     tiercc build directory holding bin/tiercc-perf (default \$TIERCC_BUILD_DIR or build/)
  --previous DIR  also run tiercc from DIR/bin (another build, e.g. the previous commit's), as the
                  column "tiercc previous", taking turns with the others; the tables add the ratio
                  of tiercc's time to its time
  --no-install    do not apt-get install missing packages
Run as root on an otherwise idle host; it builds the network per layout and always removes it.
EOF
}

rate=4gbit layouts=rails,single colls=allreduce,alltoall libs=$ALL_LIBS iters=10 repeat=2 limit=300 install=1
previous=""
out=$root/build/two-tier-compare
build=${TIERCC_BUILD_DIR:-$root/build}
command_line="bench/compare/two-tier.sh${*:+ }$*"
while (($#)); do
  case $1 in
    --rate) rate=${2:?}; shift ;;
    --layouts) layouts=${2:?}; shift ;;
    --colls) colls=${2:?}; shift ;;
    --libs) libs=${2:?}; shift ;;
    --iters) iters=${2:?}; shift ;;
    --repeat) repeat=${2:?}; shift ;;
    --timeout) limit=${2:?}; shift ;;
    --out) out=${2:?}; shift ;;
    --build) build=${2:?}; shift ;;
    --previous) previous=${2:?}; shift ;;
    --no-install) install=0 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
die() { echo "two-tier: $*" >&2; exit 1; }
for number in "$iters" "$repeat" "$limit"; do [[ $number =~ ^[1-9][0-9]*$ ]] || die "not a positive number: $number"; done
[[ $rate =~ ^[0-9]+(kbit|mbit|gbit)$ ]] || die "--rate needs e.g. 4gbit or 500mbit, got '$rate'"
want() { [[ ",$libs," == *",$1,"* ]]; }
want_openmpi() { want openmpi || want openmpi-rabenseifner || want openmpi-han || want openmpi-han-default; }
IFS=, read -ra layout_list <<<"$layouts"
for layout in "${layout_list[@]}"; do [[ $layout == rails || $layout == single ]] || die "unknown layout '$layout'"; done
IFS=, read -ra coll_list <<<"$colls"
for coll in "${coll_list[@]}"; do [[ $coll == allreduce || $coll == alltoall ]] || die "unknown collective '$coll'"; done
if [[ -n $previous ]]; then
  [[ -x $previous/bin/tiercc-perf && -x $previous/bin/tiercc-run ]] || die "--previous $previous: no bin/tiercc-perf, bin/tiercc-run"
  libs=$(sed 's/\(^\|,\)tiercc\(,\|$\)/\1tiercc,tiercc-prev\2/' <<<"$libs")
fi
IFS=, read -ra lib_list <<<"$libs"
for lib in "${lib_list[@]}"; do
  [[ $lib == tiercc-prev || ",$ALL_LIBS,openmpi-han-default,tiercc-linear," == *",$lib,"* ]] || die "unknown library '$lib'"
done

# --- environment: root, a free network, packages, benchmark programs ----------------------------
[[ $(id -u) -eq 0 ]] || die "must run as root (network namespaces)"
if timeout 10 ip netns list 2>/dev/null | grep -qE '^(tiercc-fabric|tiercc-d[0-9]+)( |$)'; then
  die "a two-tier network is already up (a test running?); run '$net down' when it is free"
fi
mkdir -p "$out/bin" "$out/raw" "$out/logs"
rm -f "$out"/raw/* "$out"/logs/*
skipped=() # "lib: reason", printed with the results

packages=(iproute2 util-linux g++ python3)
want_openmpi && packages+=(openmpi-bin libopenmpi-dev)
want mpich && packages+=(mpich libmpich-dev)
want gloo && packages+=(libgloo-dev)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'ok installed' || missing+=("$package")
done
if ((${#missing[@]})); then
  ((install)) || die "missing packages (and --no-install): ${missing[*]}"
  echo "installing ${missing[*]}"
  { timeout 300 apt-get update && timeout 900 apt-get install -y --no-install-recommends "${missing[@]}"; } \
    >"$out/logs/apt.log" 2>&1 || die "apt-get install failed; see $out/logs/apt.log"
fi

# Builds a benchmark program when its source is newer; on failure the caller drops the library.
compile() { # name source output command...
  local name=$1 source=$2 output=$3
  shift 3
  [[ -x $output && $output -nt $source ]] && return 0
  timeout 300 "$@" >"$out/logs/build-$name.log" 2>&1 && return 0
  skipped+=("$name: does not build, see $out/logs/build-$name.log")
  return 1
}
drop() { libs=$(tr , '\n' <<<"$libs" | grep -vxE "$1" | paste -sd, || true); }
source=$here/mpi_coll_bench.c
binary=$out/bin/mpi_coll_bench
if want_openmpi && ! compile openmpi "$source" "$binary.openmpi" mpicc.openmpi -O2 -std=c99 \
  -D_POSIX_C_SOURCE=200809L -o "$binary.openmpi" "$source"; then
  drop 'openmpi.*'
fi
if want mpich && ! compile mpich "$source" "$binary.mpich" mpicc.mpich -O2 -std=c99 \
  -D_POSIX_C_SOURCE=200809L -o "$binary.mpich" "$source"; then
  drop mpich
fi
if want gloo && ! compile gloo "$helpers/gloo_bench.cpp" "$out/bin/gloo_bench" g++ -O2 -std=c++17 \
  -o "$out/bin/gloo_bench" "$helpers/gloo_bench.cpp" -lgloo -lpthread; then
  drop gloo
fi
if want tiercc && [[ ! -x $build/bin/tiercc-perf || ! -x $build/bin/tiercc-run ]]; then
  skipped+=("tiercc: no tiercc-perf/tiercc-run in $build/bin (build them, or pass --build DIR)")
  drop tiercc
fi
IFS=, read -ra lib_list <<<"$libs"

# shellcheck source-path=SCRIPTDIR source=two-tier/launch.sh
source "$helpers/launch.sh"

# --- the run -------------------------------------------------------------------------------
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
  if [[ -n $current_launch ]] && kill -TERM "$current_launch" 2>/dev/null; then sleep 3; fi
  "$net" down >/dev/null 2>&1 || true
}
trap cleanup EXIT
# The columns of one collective's table (a Gloo allreduce algorithm is a column of its own).
# Open MPI's other variants change only its allreduce: Rabenseifner is an allreduce algorithm,
# and HAN in Open MPI 4.1 has no alltoall (it falls back to tuned, the openmpi column).
coll_columns() { # coll
  local lib
  for lib in "${lib_list[@]}"; do
    case $1:$lib in
      allreduce:gloo) echo gloo-hd gloo-ring ;;
      alltoall:openmpi-* | allreduce:tiercc-linear) ;;
      *) echo "$lib" ;;
    esac
  done | paste -sd' '
}
if [[ ",$colls," == *,alltoall,* ]]; then
  for lib in "${lib_list[@]}"; do
    case $lib in
      openmpi-rabenseifner) skipped+=("$lib: not run for alltoall (Rabenseifner is an allreduce algorithm)") ;;
      openmpi-han*) skipped+=("$lib: not run for alltoall (HAN in Open MPI 4.1 has no alltoall; tuned's runs)") ;;
    esac
  done
fi
if [[ ",$colls,$libs," == *,allreduce,*,tiercc-linear,* ]]; then
  skipped+=("tiercc-linear: not run for allreduce (it asks for the linear all-to-all only)")
fi
started=$(date +%s)
loads=()
for layout in "${layout_list[@]}"; do
  net_flags=(--domains "$DOMAINS" --ranks-per-domain "$RANKS_PER_DOMAIN" --rate "$rate")
  if [[ $layout == single ]]; then net_flags+=(--single-link); fi
  "$net" up "${net_flags[@]}"
  loads+=("$layout before: $(cut -d' ' -f1-3 /proc/loadavg)")
  echo "== $layout ($rate per link and direction); load average ${loads[-1]#* before: }"
  # Libraries take turns, so that a burst of load elsewhere hits them alike.
  for ((run = 1; run <= repeat; run++)); do
    for coll in "${coll_list[@]}"; do
      for lib in $(coll_columns "$coll"); do
        echo "  $coll, $lib, launch $run"
        # 8 B is a latency point of allreduce only.
        if [[ $coll == allreduce ]]; then launch "$layout" "$coll" "$lib" small "$run"; fi
        launch "$layout" "$coll" "$lib" large "$run"
      done
    done
  done
  loads+=("$layout after: $(cut -d' ' -f1-3 /proc/loadavg)")
  "$net" down
done

# --- report --------------------------------------------------------------------------------
versions="tiercc $(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)"
want_openmpi && versions+=", Open MPI $(mpirun.openmpi --version 2>/dev/null | awk 'NR == 1 {print $NF}')"
want mpich && versions+=", MPICH $(mpichversion 2>/dev/null | awk -F'\t' '/Version/ {gsub(/ /, "", $2); print $2}')"
want gloo && versions+=", Gloo $(dpkg-query -W -f='${Version}' libgloo-dev 2>/dev/null)"
report_args=(--raw "$out/raw" --out "$out" --rate "$rate" --layouts "$layouts" --command "$command_line" --versions "$versions" --seconds $(($(date +%s) - started))
  --repeat "$repeat" --iters "$iters" --host "$(hostname), $(nproc) cores")
for coll in "${coll_list[@]}"; do report_args+=(--columns "$coll:$(coll_columns "$coll" | tr ' ' ,)"); done
for load in "${loads[@]}"; do report_args+=(--load "$load"); done
for skip in "${skipped[@]}"; do report_args+=(--skipped "$skip"); done
for failure in "${failures[@]}"; do report_args+=(--failed "$failure"); done
python3 "$helpers/report.py" "${report_args[@]}"
((${#failures[@]} == 0))
exit
}
