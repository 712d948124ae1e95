#!/usr/bin/env bash
# The whole CUDA path short of a launch, over the suite: for every workload
# at config 0 and the LLM set, `kiln tune --build-only` samples 16 candidates
# from the CUDA design space, runs the GPU postprocessors, lowers each
# accepted one for the target, emits CUDA C++, compiles it with NVRTC and
# assembles it for the arch (tools/build_only.cc). Prints one line per
# workload (sketches, draws, built, rejections by postprocessor) and a total;
# a workload whose draws run out before 16 candidates pass is listed as
# short, with the postprocessors that rejected the rest. Exits non-zero if a
# workload fails for any other reason (no summary: an error, a crash).
#
# Usage: bench/gpu/build_only_suite.sh [KILN] [TARGET]
#   KILN    the kiln binary (default build/tools/kiln)
#   TARGET  default "cuda -arch=sm_90"
# Needs no GPU.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
kiln="${1:-$root/build/tools/kiln}"
target="${2:-cuda -arch=sm_90}"
seed="${SEED:-1}"
workloads=(C1D:0 C2D:0 C3D:0 GMM:0 GRP:0 DIL:0 DEP:0 T2D:0 CAP:0 NRM:0 SFM:0 CBR:0 TBG:0
           matmul:0 matmul_relu:0 conv2d_nchw:0 GEMV:0 RMS:0 ATTN_SFM:0)
failed=0
full=0
start=$(date +%s)
for w in "${workloads[@]}"; do
  out=$("$kiln" tune --workload "$w" --target "$target" --build-only --seed "$seed" 2>&1)
  rc=$?
  summary=$(grep -E "^$w on '" <<<"$out" | tail -1)
  if [[ -z "$summary" ]]; then
    echo "$w: FAILED (exit $rc): $(tail -1 <<<"$out")"
    failed=$((failed + 1))
    continue
  fi
  if grep -q ": 16 of 16 candidates built" <<<"$summary"; then
    echo "$summary"
    full=$((full + 1))
  else
    echo "$summary (short: the rest rejected by the named postprocessors)"
  fi
done
n=${#workloads[@]}
echo "build_only_suite: $full of $n workloads built 16 of 16 candidates for '$target'," \
     "$((n - full - failed)) short with named postprocessor rejections, $failed failed," \
     "in $(( $(date +%s) - start )) s"
[[ $failed -eq 0 ]]
