#!/usr/bin/env bash
# Builds the parser fuzz target with clang + ASan/UBSan in build-fuzz and runs
# it for FUZZ_SECONDS (default 60). Exits non-zero when the fuzzer finds a
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
ninja -C "$build" -j"$jobs" parser_fuzz

corpus="$build/parser_corpus"
mkdir -p "$corpus"
for dir in "$root/tests/data/tvmscript" "$root/configs/workloads"; do
  if [[ -d "$dir" ]]; then
    find "$dir" -type f \( -name '*.py' -o -name '*.tir' -o -name '*.txt' \) \
      -exec cp {} "$corpus/" \;
  fi
done

artifacts="$build/parser_artifacts"
mkdir -p "$artifacts"
echo "fuzzing the parser for ${seconds}s (corpus: $corpus)"
"$build/fuzz/parser_fuzz" "$corpus" -max_total_time="$seconds" -max_len=8192 -timeout=10 \
  -dict="$root/fuzz/parser_fuzz.dict" -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$artifacts/"
