#!/usr/bin/env bash
# Quick start, step 2: installs what is missing, builds, and runs the whole test suite through
# ctest (its summary line ends the output).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
cd "$root/build"
# Two at a time: the multi-process tests already oversubscribe the two cores.
exec ctest --output-on-failure --timeout 600 -j 2
