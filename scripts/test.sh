#!/usr/bin/env bash
# Quick start, step 2: installs what is missing, builds, runs the RDMA checks inside one boot of a
# SoftRoCE VM (tests/softroce/ci.sh), then the whole test suite through ctest, then the sanitizer
# and fuzzing jobs (scripts/sanitize.sh). The exit status is non-zero if any of them failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
# The VM step runs even if ctest would fail, and ctest runs even if the VM step failed, so one
# run reports both.
softroce_rc=0
"$root/tests/softroce/ci.sh" "$root/build" || softroce_rc=$?
if ((softroce_rc != 0)); then echo "test.sh: SoftRoCE VM checks FAILED (exit $softroce_rc); running ctest anyway"; fi
# Two at a time: the multi-process tests already oversubscribe the two cores.
ctest_rc=0
(cd "$root/build" && ctest --output-on-failure --timeout 600 -j 2) || ctest_rc=$?
# ASan+UBSan over its subset of the suite, TSan over the multithreaded tests, then each fuzzer
# for 60 s: 0 reports (docs/testing.md).
sanitize_rc=0
"$root/scripts/sanitize.sh" asan tsan fuzz || sanitize_rc=$?
if ((ctest_rc != 0)); then echo "test.sh: ctest FAILED"; fi
if ((sanitize_rc != 0)); then echo "test.sh: sanitizer or fuzzing jobs FAILED"; fi
((ctest_rc == 0 && softroce_rc == 0 && sanitize_rc == 0))
