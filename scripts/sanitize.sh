#!/usr/bin/env bash
# Builds and runs a subset of the test suite under sanitizers (CMake option
# KILN_SANITIZE, README "Sanitizer builds"). Usage:
#   scripts/sanitize.sh asan   # AddressSanitizer + UndefinedBehaviorSanitizer
#   scripts/sanitize.sh tsan   # ThreadSanitizer
# Every finding fails the test (-fno-sanitize-recover). Test names can be
# replaced through KILN_ASAN_TESTS / KILN_TSAN_TESTS (space-separated test
# executables); KILN_TSAN_FILTER is the gtest filter of the TSan run.
#
# Before the tests, tests/sanitize/sanitizer_canary runs its planted bugs (a
# heap overflow and a signed overflow under ASan + UBSan, a data race under
# TSan): a tree that does not report them fails the stage, so a tree built
# without its sanitizer can never pass silently.
#
# What runs by default, chosen so that .ci/run stays under its 45 minutes
# on 2 cores (README "Sanitizer builds" has the measured costs):
# - ASan + UBSan (clang, build-asan): every test of the IR (arith, ir,
#   schedule, text, transform, workloads: they link kiln_ir alone) and the
#   database's tests that link kiln_database alone. The runner's parent side
#   (protocol decoding, child supervision) needs kiln_rpc, i.e. LLVM codegen
#   and gRPC, two more full library builds: add its tests through
#   KILN_ASAN_TESTS (child_process_test protocol_test timing_test
#   output_check_test local_runner_test measure_test); its decoders run
#   under ASan + UBSan in the fuzz stage (scripts/fuzz.sh, protocol_fuzz).
# - TSan (gcc, build-tsan): parallel sampling and evolution at 1 and 2
#   threads (evolutionary_search_test, replay_trace_test; in a sanitizer
#   tree they link the search without the runner and gRPC). The runner's
#   parallel builds: KILN_TSAN_TESTS="local_runner_test".
#
# The runner's child (kiln-runner) is the normal build's, uninstrumented: the
# sanitizers check the parent side, and an instrumented child could not run
# under the runner's address-space limit (ASan and TSan reserve terabytes of
# shadow memory).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
mode="${1:-}"
jobs="${SANITIZE_BUILD_JOBS:-2}"
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}" CCACHE_NOHASHDIR=1
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
runner="${KILN_RUNNER:-$root/${KILN_BUILD_DIR:-build}/tools/kiln-runner}"
if [[ ! -x "$runner" ]]; then
  echo "sanitize: no kiln-runner at $runner (build the normal tree first: scripts/build.sh)" >&2
  exit 2
fi

case "$mode" in
  asan)
    build="${ASAN_BUILD_DIR:-$root/build-asan}"
    # Memory bugs hurt most in the IR (arith, schedule, transform, text) and
    # the database.
    tests="${KILN_ASAN_TESTS:-$(cd tests && ls arith/*_test.cc ir/*_test.cc schedule/*_test.cc \
      text/*_test.cc transform/*_test.cc workloads/*_test.cc | xargs -n1 basename | sed 's/\.cc$//' \
      | tr '\n' ' ' ) database_test jobs_table_test record_trust_test crash_test}"
    CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -G Ninja \
      -DKILN_SANITIZE=address,undefined -DKILN_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      "${launcher[@]}" >/dev/null
    filter="*"
    # Leaks are not what this stage looks for (the JIT and gRPC keep
    # process-lifetime allocations); detect_leaks=0 keeps reports to real bugs.
    export ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=0"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    ;;
  tsan)
    build="${TSAN_BUILD_DIR:-$root/build-tsan}"
    # The tests that run threads: parallel sampling and evolution at 1 and 2
    # threads (the determinism tests, the two whose names say "Thread"; the
    # rest of these executables run one thread, and under TSan the whole of
    # evolutionary_search_test takes over 15 minutes on 2 cores, the
    # threaded test alone about 4), and the interpreter's GPU thread blocks
    # (gpu_lowering_test's tests of lowered kernels, whose names say
    # "Thread" too; ir/interpreter/thread_block.h), and the CPU runtime's
    # thread pool, whose workers poll for jobs (parallel_runtime_test).
    tests="${KILN_TSAN_TESTS:-evolutionary_search_test replay_trace_test gpu_lowering_test parallel_runtime_test}"
    filter="${KILN_TSAN_FILTER:-*Thread*}"
    cmake -S "$root" -B "$build" -G Ninja -DKILN_SANITIZE=thread -DKILN_BUILD_BENCH=OFF \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
    # XGBoost's OpenMP (libgomp) is not instrumented: its barriers look like
    # races to TSan (tests/tsan.supp).
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp"
    ;;
  *)
    echo "usage: scripts/sanitize.sh asan|tsan" >&2
    exit 2
    ;;
esac

start=$(date +%s)
# shellcheck disable=SC2086
ninja -C "$build" -j"$jobs" sanitizer_canary $tests
echo "sanitize $mode: built in $(( $(date +%s) - start )) s"

# The canary (tests/sanitize/sanitizer_canary.cc) first: each planted bug
# must be reported, so that a tree built without its sanitizer (a lost flag,
# a cached configure) fails the stage instead of passing silently.
# A data race between two threads that each write once is reported only in
# some interleavings (TSan missed it in about half the runs here), so the
# race is given up to 30 runs; heap and signed overflows are caught every time.
canary() {
  local what=$1 expect=$2 attempts=${3:-1} log="$build/sanitize-canary-$1.log" rc=0 i
  for (( i = 1; i <= attempts; ++i )); do
    rc=0
    "$build/tests/sanitizer_canary" "$what" >"$log" 2>&1 || rc=$?
    if (( rc != 0 )) && grep -q -- "$expect" "$log"; then break; fi
  done
  if (( rc == 0 )) || ! grep -q -- "$expect" "$log"; then
    echo "sanitize $mode: the planted $what was NOT caught (rc $rc, no '$expect'): this tree does not" \
      "check what it should; its output:" >&2
    cat "$log" >&2
    exit 1
  fi
  echo "sanitize $mode: planted $what caught (rc $rc):"
  grep -E -m 3 -- "$expect|WRITE of size|at .*sanitizer_canary.cc|#[01] " "$log" | sed 's/^/    /'
}
case "$mode" in
  asan)
    canary heap-overflow "ERROR: AddressSanitizer: heap-buffer-overflow"
    canary signed-overflow "runtime error: signed integer overflow"
    ;;
  tsan)
    canary race "WARNING: ThreadSanitizer: data race" 30
    ;;
esac
start=$(date +%s)
export KILN_RUNNER="$runner" OMP_WAIT_POLICY=PASSIVE SANITIZE_BUILD="$build" SANITIZE_FILTER="$filter"
# One test executable: its log and its status (a file per test, so that the
# runs can go $jobs at a time).
run_one() {
  local t=$1 exe log
  exe=$(find "$SANITIZE_BUILD/tests" -name "$t" -type f -perm -u+x | head -1)
  log="$SANITIZE_BUILD/sanitize-$t.log"
  if [[ -z "$exe" ]]; then
    echo "test $t was not built" >"$log"
    echo 1 >"$log.rc"
    return
  fi
  local t0=$SECONDS
  "$exe" --gtest_filter="$SANITIZE_FILTER" --gtest_brief=1 >"$log" 2>&1
  echo $? >"$log.rc"
  echo "  $t: rc $(cat "$log.rc"), $(( SECONDS - t0 )) s"
}
export -f run_one
# shellcheck disable=SC2086
printf '%s\n' $tests | xargs -P "$jobs" -I{} bash -c 'run_one "$@"' _ {}
failed=()
for t in $tests; do
  if [[ "$(cat "$build/sanitize-$t.log.rc")" != 0 ]]; then
    echo "sanitize $mode: $t FAILED (log: $build/sanitize-$t.log); its last lines:" >&2
    tail -40 "$build/sanitize-$t.log" >&2
    failed+=("$t")
  fi
done
echo "sanitize $mode: $(echo $tests | wc -w) test executables ran in $(( $(date +%s) - start )) s"
if (( ${#failed[@]} > 0 )); then
  echo "sanitize $mode: failed: ${failed[*]}" >&2
  exit 1
fi
echo "sanitize $mode: every test passed"
