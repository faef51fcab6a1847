#!/usr/bin/env bash
# The cuda-ipc backend's check on a machine with a GPU: configures a minimal build (library +
# cuda_ipc_test only, no verbs/UCX/benchmarks), builds, runs the test with a time limit and
# prints a one-line summary. Run from anywhere; about 2-4 minutes on 16 cores, bounded to ~8.
# Exit 0: every test passed; 1: a step or a test failed; 2: the tests were skipped (no usable
# GPU, reason printed): on the machine meant to have one, that is a failure too.
#
# Dependencies: a CUDA toolkit (nvcc) plus cmake, a C++20 compiler, pkg-config, Boost headers and
# GoogleTest. Where they are missing and apt can reach an archive, scripts/install-deps.sh
# installs them. For an offline GPU machine, fetch the Debian packages here first:
#   tests/cuda/device-check.sh --fetch-deps    # writes .deps/*.deb in the repository root
# then carry .deps along; they are unpacked under $TIERCC_DEPS_ROOT (default /tmp/tiercc-deps).
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-/tmp/tiercc-cuda-check}
deps_root=${TIERCC_DEPS_ROOT:-/tmp/tiercc-deps}
t0=$SECONDS
say() { echo "device-check: $*"; }
die() { say "FAILED: $*"; say "SUMMARY: FAIL ($*) after $((SECONDS - t0)) s"; exit 1; }

if [[ ${1:-} == --fetch-deps ]]; then
  mkdir -p "$repo/.deps" && cd "$repo/.deps" || exit 1
  apt-get download libboost1.74-dev libgtest-dev pkgconf pkgconf-bin libpkgconf3 || exit 1
  say "fetched into $repo/.deps: $(ls)"
  exit 0
fi

# Dependencies: carried .debs first, else the system's, else apt.
if compgen -G "$repo/.deps/*.deb" >/dev/null; then
  mkdir -p "$deps_root"
  for d in "$repo"/.deps/*.deb; do dpkg -x "$d" "$deps_root" || die "unpacking $d"; done
  export PATH="$deps_root/usr/bin:$PATH"
  export LD_LIBRARY_PATH="$deps_root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export CMAKE_PREFIX_PATH="$deps_root/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export CPATH="$deps_root/usr/include${CPATH:+:$CPATH}"
  say "using carried packages unpacked under $deps_root"
elif ! command -v pkg-config >/dev/null || [[ ! -d /usr/include/boost ]] || [[ ! -d /usr/include/gtest ]]; then
  say "dependencies missing, running scripts/install-deps.sh"
  timeout 240 "$repo/scripts/install-deps.sh" || die "scripts/install-deps.sh (offline? see --fetch-deps above)"
fi

nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[[ -x $nvcc ]] || die "no nvcc (CUDA toolkit) on this machine"
say "GPU: $(nvidia-smi -L 2>/dev/null | head -2 | tr '\n' ' ' || echo 'nvidia-smi not found')"
say "nvcc: $("$nvcc" --version | tail -1)"

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
rm -rf "$build"
timeout 90 cmake -S "$repo" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CUDA_COMPILER="$nvcc" -DTIERCC_WITH_CUDA=ON -DTIERCC_WITH_VERBS=OFF -DTIERCC_WITH_UCX=OFF \
  -DTIERCC_BUILD_BENCH=OFF -DTIERCC_BUILD_TESTS=ON >"$build.configure.log" 2>&1 \
  || { tail -30 "$build.configure.log"; die "configure (log: $build.configure.log)"; }
say "configured in $((SECONDS - t0)) s"
timeout 270 cmake --build "$build" --target cuda_ipc_test -j "$(nproc)" >"$build.build.log" 2>&1 \
  || { tail -40 "$build.build.log"; die "build (log: $build.build.log)"; }
say "built in $((SECONDS - t0)) s"

out="$build.test.log"
timeout 120 "$build/bin/cuda_ipc_test" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
passed=$(grep -c '^\[       OK \]' "$out")
failed=$(grep -c '^\[  FAILED  \] CudaIpc\.' "$out")
skipped=$(grep -c '^\[  SKIPPED \] CudaIpc\..* (' "$out")
summary="passed $passed, failed $failed, skipped $skipped, exit $rc, $((SECONDS - t0)) s"
if ((rc != 0 || failed > 0)); then
  say "SUMMARY: FAIL ($summary)"
  exit 1
fi
if ((skipped > 0)); then
  say "skip reason: $(grep -m1 'cuda-ipc unavailable' "$out")"
  say "SUMMARY: SKIPPED ($summary)"
  exit 2
fi
say "SUMMARY: PASS ($summary)"
