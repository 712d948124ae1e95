#!/usr/bin/env bash
# Builds the fuzz targets with clang + ASan/UBSan in build-fuzz and runs the
# parser fuzzer for FUZZ_SECONDS (default 60), the trace fuzzer for
# TRACE_FUZZ_SECONDS (default 30) and the runner wire protocol fuzzer for
# PROTOCOL_FUZZ_SECONDS (default 30), and the farm coordinator's wire
# fuzzers (worker messages, job submissions, other requests, the auth file
# and --simulate models) for FARM_FUZZ_SECONDS each (default 10), and the TVM MetaSchedule database
# import fuzzer for TVM_FUZZ_SECONDS (default 20). Exits non-zero when the fuzzer finds a
# crash, a sanitizer report or a print/parse mismatch.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${FUZZ_SECONDS:-60}"
jobs="${FUZZ_BUILD_JOBS:-2}"

launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -G Ninja -DKILN_FUZZ=ON \
  -DKILN_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
ninja -C "$build" -j"$jobs" parser_fuzz trace_fuzz protocol_fuzz farm_worker_fuzz farm_submit_fuzz \
  farm_request_fuzz farm_auth_fuzz tvm_import_fuzz

# run_target NAME SECONDS DICT SEED_DIR... : fuzz one target from a seeded corpus
# (inputs up to MAX_LEN bytes, default 8192).
run_target() {
  local name=$1 secs=$2 dict=$3
  shift 3
  local corpus="$build/${name}_corpus" artifacts="$build/${name}_artifacts"
  mkdir -p "$corpus" "$artifacts"
  for dir in "$@"; do
    if [[ -d "$dir" ]]; then
      find "$dir" -type f \( -name '*.py' -o -name '*.json' \) -exec cp {} "$corpus/" \;
    fi
  done
  local extra=()
  if [[ -n "$dict" ]]; then extra=(-dict="$dict"); fi
  echo "fuzzing ${name} for ${secs}s (corpus: $corpus)"
  "$build/fuzz/${name}_fuzz" "$corpus" -max_total_time="$secs" -max_len="${MAX_LEN:-8192}" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/" "${extra[@]}"
}

run_target parser "$seconds" "$root/fuzz/parser_fuzz.dict" "$root/tests/data/tvmscript" \
  "$root/configs/workloads"
run_target trace "${TRACE_FUZZ_SECONDS:-30}" "" "$root/tests/data/traces"
run_target protocol "${PROTOCOL_FUZZ_SECONDS:-30}" "$root/fuzz/protocol_fuzz.dict"
run_target farm_worker "${FARM_FUZZ_SECONDS:-10}" ""
run_target farm_submit "${FARM_FUZZ_SECONDS:-10}" ""
run_target farm_request "${FARM_FUZZ_SECONDS:-10}" ""
run_target farm_auth "${FARM_FUZZ_SECONDS:-10}" ""
# TVM's JSON graphs of even tiny functions are several kilobytes, and a
# workload file line holds one in base64.
MAX_LEN=65536 run_target tvm_import "${TVM_FUZZ_SECONDS:-20}" "$root/fuzz/tvm_import_fuzz.dict" \
  "$root/tests/data/tvm/fuzz_seeds"
