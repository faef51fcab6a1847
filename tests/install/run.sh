#!/usr/bin/env bash
# Installs the built tiercc into a scratch prefix, then configures, builds and runs the
# consumer project against it: proves find_package(tiercc) and pkg-config work from outside.
# Usage: run.sh <tiercc build dir> <scratch dir>
set -euo pipefail
build=$1
scratch=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
export PKG_CONFIG_PATH="$scratch/prefix/lib/pkgconfig"
cmake -S "$here" -B "$scratch/consumer" -DCMAKE_PREFIX_PATH="$scratch/prefix" >"$scratch/configure.log" 2>&1 \
  || { cat "$scratch/configure.log"; exit 1; }
cmake --build "$scratch/consumer" -j 2 >"$scratch/build.log" 2>&1 || { cat "$scratch/build.log"; exit 1; }
export LD_LIBRARY_PATH="$scratch/prefix/lib"
# One-rank jobs: rank 0 hosts the store on a port the kernel picks (port 0).
"$scratch/consumer/consumer_cmake" "127.0.0.1:0"
"$scratch/consumer/consumer_pkgconfig" "127.0.0.1:0"
