#!/usr/bin/env bash
# Configures and builds tiercc into build/ (Release with debug info, warnings as errors).
# Extra arguments go to cmake's configure step.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTIERCC_WERROR=ON "$@" >build.configure.log 2>&1 \
  || { cat build.configure.log; exit 1; }
grep 'tiercc:' build.configure.log || true
cmake --build build -j "$jobs"
