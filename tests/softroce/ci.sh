#!/usr/bin/env bash
# tiercc's SoftRoCE CI step (scripts/test.sh runs it after ctest): builds the VM image if needed,
# then runs the RDMA checks listed below inside ONE boot of the VM, against the build dir's binaries.
# usage: tests/softroce/ci.sh [BUILD_DIR]   (default build/); exit 0 only if the VM ran and every check passed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
bin=$build/bin
dir=${TIERCC_SOFTROCE_DIR:-$root/build/softroce}

die() {
  echo "softroce: FAILED: $*" >&2
  exit 1
}
[[ $build != *[[:space:]\'\"\\]* ]] || die "the build dir's path must not contain white space or quotes: $build"

# The checks, in the order they run: NAME=COMMAND, a /bin/sh command line run in the VM, where the
# build dir is mounted at its host path and is the working dir. Add new checks here.
demo_2x2="$bin/tiercc-run -n 4 --domain-size 2 --timeout 200 $bin/tiercc-demo"
checks=(
  "rxe0-active=ibv_devinfo -v -d rxe0 | grep 'state:[[:space:]]*PORT_ACTIVE'"
  "verbs-smoke=$bin/softroce_verbs_smoke"
  "tiercc-info-sees-rxe0=$bin/tiercc-info | grep -A1 'ibverbs device rxe0'"
  "allreduce-tcp-2x2=TIERCC_TRANSPORT=tcp $demo_2x2"
  # The TCP tier and the store under 1% loss and reordering (netem, which the host's kernel
  # lacks): the demo's results, then every case of the fault matrix (tests/fault_matrix_test.cpp).
  "allreduce-tcp-netem-2x2=TIERCC_TRANSPORT=tcp under-netem.sh $demo_2x2"
  "fault-matrix-tcp-netem=TIERCC_TRANSPORT=tcp under-netem.sh $bin/fault_matrix_test"
)
# Checks of tiercc's ibverbs backend; they run once tiercc-info lists the ibverbs transport.
# expect-rdma-traffic.sh fails a check that sent no packets over rxe0 (a silent fallback to TCP).
# The ring allreduce of 3 domains of 2 addresses ranks off the rails: those queue pairs connect on
# first use (init connects only the rails).
ibverbs_checks=(
  "allreduce-ibverbs-2x2=TIERCC_TRANSPORT=ibverbs expect-rdma-traffic.sh $demo_2x2"
  "ring-allreduce-ibverbs-3x2=TIERCC_TRANSPORT=ibverbs TIERCC_ALGO=allreduce:ring expect-rdma-traffic.sh $bin/tiercc-run -n 6 --domain-size 2 --timeout 200 $bin/tiercc-demo"
)
# perftest's ib_write_bw and tiercc-transport-bench (ibverbs iwrite) at 64 KiB..1 MiB side by side,
# with the ratio (about 40 s). The speeds are printed, never judged: it fails only on errors.
vs_perftest="transport-vs-perftest=expect-rdma-traffic.sh sh $bin/tiercc-transport-vs-perftest.sh"
# GoogleTest binaries of the ibverbs backend, "NAME BINARY FILTER": each runs (with the filter) if
# it is built and the filter selects tests in it.
ibverbs_gtests=(
  "ibverbs-conformance transport_conformance_test *ibverbs*"
  "ibverbs-unit ibverbs_test *"
)

# tiercc-info prints a "scale-out transports" section with one "  NAME: ..." line per backend built.
ibverbs_backend_built() {
  local info
  info=$(timeout 60 "$bin/tiercc-info") || die "$bin/tiercc-info failed"
  awk '/^scale-out transports/ { s = 1; next } /^[^ ]/ { s = 0 } s && $1 == "ibverbs:" { found = 1 }
       END { exit !found }' <<<"$info"
}

has_tests() { # BINARY FILTER
  local tests
  [[ -x $bin/$1 ]] || return 1
  tests=$(timeout 60 "$bin/$1" --gtest_list_tests --gtest_filter="$2") || die "$bin/$1 --gtest_list_tests failed"
  grep -q '^  ' <<<"$tests"
}

[[ -x $bin/softroce_verbs_smoke ]] ||
  die "$bin/softroce_verbs_smoke is not built (TIERCC_WITH_VERBS off? scripts/install-deps.sh installs libibverbs-dev)"
[[ -x $bin/tiercc-info && -x $bin/tiercc-run && -x $bin/tiercc-demo ]] || die "tiercc's tools are not built in $bin"
skipped=()  # "REASON: NAME..." lines
skipped_count=0
skip() { # REASON NAME...
  local reason=$1
  shift
  skipped+=("$reason: $*")
  skipped_count=$((skipped_count + $#))
  echo "softroce: SKIPPED: $reason: $*"
}
if ibverbs_backend_built; then
  for gtest in "${ibverbs_gtests[@]}"; do
    read -r name binary filter <<<"$gtest"
    if has_tests "$binary" "$filter"; then
      checks+=("$name=expect-rdma-traffic.sh $bin/$binary --gtest_filter='$filter'")
    else
      skip "$binary is not built or has no tests matching $filter" "$name"
    fi
  done
  checks+=("${ibverbs_checks[@]}")
  if [[ -x $bin/tiercc-transport-bench && -f $bin/tiercc-transport-vs-perftest.sh ]]; then
    checks+=("$vs_perftest")
  else
    skip "tiercc-transport-bench is not built" "${vs_perftest%%=*}"
  fi
else
  skip "ibverbs backend not built yet (tiercc-info lists no ibverbs transport)" \
    "${ibverbs_gtests[@]%% *}" "${ibverbs_checks[@]%%=*}" "${vs_perftest%%=*}"
fi

"$here/build-image.sh" || die "cannot build the VM image (see above)"
log=$dir/ci-vm.log
rc=0
"$here/run-vm.sh" --share "$build" -e "TIERCC_BIN_DIR=$bin" \
  --timeout 600 --log "$log" -- in-vm.sh "${checks[@]}" || rc=$?

echo "softroce: results (console log: $log)"
sed -n 's/^\[ *[0-9.]*\] in-vm: \(PASS\|FAIL\) /  \1 /p' "$log"
for s in "${skipped[@]}"; do echo "  SKIPPED: $s"; done
if ((rc != 0)); then
  echo "softroce: FAILED (VM exit $rc): see the lines above and $log"
  exit 1
fi
echo "softroce: PASSED: ${#checks[@]} checks in the SoftRoCE VM, $skipped_count skipped"
