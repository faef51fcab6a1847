#!/usr/bin/env bash
# Installs tiercc's build and test dependencies from Debian's archive; idempotent (installs
# only what is missing, so a second run is quick and needs no network).
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libboost-dev            # Boost.Asio (header-only): the store and the TCP transport
  libibverbs-dev librdmacm-dev ibverbs-providers rdma-core  # RDMA verbs (scale-out)
  libucx-dev              # UCX (scale-out)
  libgtest-dev libgmock-dev  # GoogleTest
  libbenchmark-dev        # Google Benchmark
  iproute2 procps         # ip netns for network tests; ps for diagnostics
  # The PyTorch backend (python/): Debian's torch, its C++ headers, the pybind11 torch was
  # built with, and pytest for tests/torch.
  python3-torch libtorch-dev pybind11-dev python3-dev python3-pytest
  prometheus              # scrapes a live job in tests/metrics (the /metrics endpoint)
  python3-matplotlib      # tiercc-trace draws a job's timeline as a PNG
  clang libclang-rt-14-dev  # libFuzzer for tests/fuzz (scripts/sanitize.sh); gcc brings ASan/UBSan/TSan
  libpmix-dev             # PMIx: start under mpirun / srun --mpi=pmix with no tiercc variables
  slurmd slurmctld slurm-client munge  # tests/slurm: srun --mpi=pmix on a one-node Slurm it brings up
  openmpi-bin libopenmpi-dev  # examples/mpi_app.c and tiercc/mpi.hpp under mpirun (tests/mpi)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
