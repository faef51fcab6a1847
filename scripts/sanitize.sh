#!/usr/bin/env bash
# The sanitizer and fuzzing jobs (docs/testing.md, "Sanitizers and fuzzing"); scripts/test.sh runs
# them after the suite. Each job builds into a folder of its own and prints one summary line:
#   asan   AddressSanitizer + UndefinedBehaviorSanitizer (gcc) over the tests in ASAN_TESTS
#   tsan   ThreadSanitizer (gcc) over the multithreaded tests in TSAN_TESTS
#   fuzz   the libFuzzer targets of tests/fuzz (clang), each for FUZZ_SECONDS from its corpus
# Every process writes its sanitizer reports to files of its own (log_path), forked ranks
# included, so a report cannot hide in a test's swallowed output; the job fails on any report
# and on any failing test. Usage: scripts/sanitize.sh [asan] [tsan] [fuzz] (default: all three,
# as scripts/test.sh runs them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=$(nproc 2>/dev/null || echo 2)
fuzz_seconds=${FUZZ_SECONDS:-60}

# The suite's allocation, failure, store and bootstrap paths; the collectives on every path.
asan_tests=(store_protocol_test store_test store_limits_test store_auth_test units_test deadline_test plan_test
  api_test failure_test shrink_test hang_diagnosis_test metrics_test collectives_test)
# What runs threads beside the caller's: the exec gate's lone and joining threads, the store's io
# thread and its clients, Work and abort() from another thread, the failure detector and its
# verdicts, the metrics server, the SIGUSR1 dump.
tsan_tests=(biased_mutex_test exec_gate_test store_test store_limits_test store_auth_test api_test hang_diagnosis_test metrics_test failure_test)
# -O1 -g1: line numbers for the reports at a fraction of a full build's time.
common=(-DCMAKE_BUILD_TYPE=None "-DCMAKE_CXX_FLAGS=-O1 -g1" "-DCMAKE_C_FLAGS=-O1 -g1" -DTIERCC_BUILD_BENCH=OFF
  -DTIERCC_WITH_TORCH=OFF -DTIERCC_WITH_CUDA=OFF)

configure() {  # folder, then cmake arguments
  local dir=$1
  shift
  cmake -S . -B "$dir" "${common[@]}" "$@" >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; return 1; }
}

# Runs test binaries two at a time with sanitizer logs in $reports; prints failures and reports.
run_tests() {  # build folder, reports folder, binaries...
  local dir=$1 reports=$2
  shift 2
  local failed=0 pids=() names=()
  for t in "$@"; do
    (TIERCC_BIN_DIR="$root/$dir/bin" timeout 900 "$dir/bin/$t" --gtest_brief=1 >"$reports/$t.log" 2>&1) &
    pids+=($!)
    names+=("$t")
    if ((${#pids[@]} == 2)); then
      wait "${pids[0]}" || { echo "sanitize: ${names[0]} FAILED:"; tail -n 40 "$reports/${names[0]}.log"; failed=1; }
      pids=("${pids[1]}")
      names=("${names[1]}")
    fi
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { echo "sanitize: ${names[$i]} FAILED:"; tail -n 40 "$reports/${names[$i]}.log"; failed=1; }
  done
  return $failed
}

# Prints every report and returns how many there were (0: clean): the report files, and the
# UBSan lines that reach a test's output instead (gcc's UBSan may write to stderr).
count_reports() {  # reports folder, prefix
  local n=0
  for f in "$1"/"$2".*; do
    [[ -e "$f" ]] || continue
    n=$((n + 1))
    echo "---- $f"
    head -n 60 "$f"
  done
  local inline
  inline=$(cat "$1"/*.log 2>/dev/null | grep -c 'runtime error:' || true)
  if ((inline > 0)); then
    grep -h -A3 'runtime error:' "$1"/*.log | head -n 40
    n=$((n + inline))
  fi
  return $((n > 255 ? 255 : n))
}

# Builds `folder` with TIERCC_SANITIZE=`sanitizers` (the tests, and the tools some of them run),
# runs the tests with every sanitizer's reports going to files in a fresh folder, and fails on a
# report or a failing test.
sanitizer_job() {  # label, folder, sanitizers, test programs...
  local label=$1 dir=$2 sanitizers=$3 reports
  shift 3
  configure "$dir" -DTIERCC_SANITIZE="$sanitizers"
  cmake --build "$dir" -j "$jobs" --target "$@" tiercc-info tiercc-run >"$dir.build.log" 2>&1 \
    || { tail -n 60 "$dir.build.log"; return 1; }
  reports=$(mktemp -d "/tmp/tiercc-$label.XXXXXX")
  local status=0 found=0
  # The suite's ranks are forked processes: each writes reports of its own; TSan sees each one's
  # threads, not memory shared between processes, which the domains' own tests check.
  ASAN_OPTIONS="log_path=$reports/report:detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=0" \
    UBSAN_OPTIONS="log_path=$reports/report:print_stacktrace=1:halt_on_error=1" \
    TSAN_OPTIONS="log_path=$reports/report:halt_on_error=1:second_deadlock_stack=1:die_after_fork=0" \
    run_tests "$dir" "$reports" "$@" || status=1
  count_reports "$reports" report || found=$?
  echo "sanitize: $label: $# test programs, $found reports$( ((status)) && echo ', tests FAILED')"
  ((status == 0 && found == 0))
}

job_asan() { sanitizer_job asan+ubsan build-asan address,undefined "${asan_tests[@]}"; }

# UCX's memory hooks run in a new thread before TSan has set it up, and crash it: off here.
job_tsan() {
  UCX_MEM_EVENTS=no UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none \
    sanitizer_job tsan build-tsan thread "${tsan_tests[@]}"
}

job_fuzz() {
  local dir=build-fuzz
  CC=clang CXX=clang++ configure "$dir" -DTIERCC_FUZZ=ON -DTIERCC_BUILD_TESTS=OFF
  cmake --build "$dir" -j "$jobs" --target tiercc_fuzzers >"$dir.build.log" 2>&1 \
    || { tail -n 60 "$dir.build.log"; return 1; }
  local status=0 runs=0 work
  work=$(mktemp -d /tmp/tiercc-fuzz.XXXXXX)
  local targets=()
  for f in "$dir"/fuzz/fuzz_*; do targets+=("$(basename "$f")"); done
  # Two at a time; new inputs go to a scratch corpus, the repository's stays as it is.
  for ((i = 0; i < ${#targets[@]}; i += 2)); do
    local pids=() names=()
    for t in "${targets[@]:i:2}"; do
      mkdir -p "$work/$t"
      (ASAN_OPTIONS=detect_leaks=1 "$dir/fuzz/$t" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$work/$t-" "$work/$t" "tests/fuzz/corpus/$t" >"$work/$t.log" 2>&1) &
      pids+=($!)
      names+=("$t")
    done
    for j in "${!pids[@]}"; do
      local t=${names[$j]}
      runs=$((runs + 1))
      if wait "${pids[$j]}"; then
        echo "sanitize: fuzz $t: $(grep -m1 'stat::number_of_executed_units' "$work/$t.log" | awk '{print $2}') inputs in ${fuzz_seconds} s, no finding"
      else
        status=1
        echo "sanitize: fuzz $t FOUND something (inputs saved as $work/$t-*):"
        grep -vE '^#|NEW_FUNC' "$work/$t.log" | tail -n 60
      fi
    done
  done
  echo "sanitize: fuzz: $runs targets, ${fuzz_seconds} s each$( ((status)) && echo ', FINDINGS')"
  return $status
}

selected=("$@")
((${#selected[@]})) || selected=(asan tsan fuzz)
overall=0
for job in "${selected[@]}"; do
  case $job in
    asan | tsan | fuzz) ;;
    *) echo "sanitize: unknown job '$job' (asan, tsan, fuzz)"; exit 2 ;;
  esac
  start=$SECONDS
  "job_$job" || overall=1
  echo "sanitize: $job took $((SECONDS - start)) s"
done
exit $overall
