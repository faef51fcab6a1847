#!/usr/bin/env bash
# Quick start, step 2: installs what is missing, builds, runs the whole test suite through ctest,
# then the RDMA checks inside one boot of a SoftRoCE VM (tests/softroce/ci.sh). The last line says
# whether both passed; the exit status is non-zero if anything failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
# Two at a time: the multi-process tests already oversubscribe the two cores.
ctest_rc=0
(cd "$root/build" && ctest --output-on-failure --timeout 600 -j 2) || ctest_rc=$?
# Runs even when ctest failed, so that one run reports both.
softroce_rc=0
"$root/tests/softroce/ci.sh" "$root/build" || softroce_rc=$?
verdict() { if (($1 == 0)); then echo passed; else echo "FAILED (exit $1)"; fi; }
echo "test.sh: ctest $(verdict "$ctest_rc"); SoftRoCE VM checks $(verdict "$softroce_rc")"
((ctest_rc == 0 && softroce_rc == 0))
