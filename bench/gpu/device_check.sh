#!/usr/bin/env bash
# The GPU device check of issue 19, one command on a machine with an NVIDIA
# GPU: unpacks the self-contained Kiln bundle (scripts/gpu_bundle.sh, made
# on a build machine and carried here), tunes fp32 GEMM 1024^3 (GMM:3) and
# softmax 1024x1024 (SFM:2) and the fp16 GEMM 1024^3 on tensor cores
# (GMM_FP16:3: float16 inputs, float32 accumulation, wmma; sm_80 and later)
# with ReplayTrace on the GPU (every measured
# kernel is checked by the runner against the CPU reference of the
# unscheduled workload), and prints Kiln's best against PyTorch (cuBLAS for
# the GEMM, fp32 with TF32 off; torch.softmax; torch.matmul in fp16 for the
# tensor-core GEMM) as a ratio, with the goal of 0.5x met or not (the goal is
# issue 19's for fp32; the fp16 line is reported against the same mark).
#
#   bash bench/gpu/device_check.sh [BUNDLE]   # default build/gpu-bundle/kiln-gpu.tar.xz
# Environment: KILN_GPU_TRIALS (64 per workload), KILN_GPU_TARGET (default:
# cuda -arch=sm_XX of GPU 0). Exits non-zero when a step fails; the goal not
# being met is reported, not an error.
set -euo pipefail
cd "$(dirname "$0")/../.."
bundle="${1:-build/gpu-bundle/kiln-gpu.tar.xz}"
trials="${KILN_GPU_TRIALS:-64}"
[ -f "$bundle" ] || { echo "device_check: no bundle at $bundle (make it with scripts/gpu_bundle.sh)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xJf "$bundle"
kiln="$work/kiln-gpu/bin/kiln"
"$kiln" --version

if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader
  cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')"
fi
target="${KILN_GPU_TARGET:-cuda -arch=sm_${cap:-90}}"
# Half precision and tensor cores compile against the toolkit's headers
# (cuda_fp16.h, mma.h; codegen/cuda/nvrtc_compiler.h says where Kiln looks).
if [ -z "${KILN_CUDA_INCLUDE:-}" ] && command -v nvcc >/dev/null; then
  export KILN_CUDA_INCLUDE="$(dirname "$(dirname "$(command -v nvcc)")")/include"
fi
echo "device_check: target '$target', $trials trials per workload (ReplayTrace)"
db="$work/gpu.db"
# A first, cheap step: the bundle builds CUDA candidates here (NVRTC and
# nvJitLink of this machine's toolkit load, the design space samples).
"$kiln" tune -w GMM:3 --target "$target" --build-only --trials-per-iter 2 --seed 1 | tail -1

# workload label, then the baseline's arguments (bench/gpu/torch_baseline.py)
checks=("GMM:3|gemm 1 1024 1024 1024" "SFM:2|softmax 1024 1024")
if [ "${cap:-90}" -ge 80 ]; then
  checks+=("GMM_FP16:3|gemm_fp16 1 1024 1024 1024")
else
  echo "device_check: sm_${cap} is below sm_80: no tensor-core GEMM (MultiLevelTilingTensorCore needs sm_80+)"
fi
status=0
for c in "${checks[@]}"; do
  w="${c%%|*}"
  base="${c#*|}"
  echo
  echo "== $w: tuning ($trials trials)"
  start=$(date +%s)
  if ! "$kiln" tune -w "$w" --target "$target" --strategy replay --trials "$trials" \
      --trials-per-iter 32 --number 3 --repeat 3 --min-repeat-ms 10 --timeout 20 \
      --db "$db" --json >"$work/$w.json" 2>"$work/$w.err"; then
    echo "device_check: kiln tune $w failed:" >&2
    tail -20 "$work/$w.err" >&2
    status=1
    continue
  fi
  echo "   tuned in $(( $(date +%s) - start )) s"
  # shellcheck disable=SC2086
  python3 bench/gpu/torch_baseline.py $base >"$work/$w.torch.json"
  python3 - "$work/$w.json" "$work/$w.torch.json" <<'PY'
import json, sys
k = json.load(open(sys.argv[1]))
t = json.load(open(sys.argv[2]))
errors = k.get("errors_by_kind", {})
print(f"   measured {k['measured_this_run']} candidates on {t['device']}; "
      f"errors by kind: {errors if errors else 'none'}")
best = k.get("best")
if not best:
    print("   no verified candidate: nothing to compare")
    sys.exit(1)
ks, ts = best["median_seconds"], t["median_seconds"]
ratio = ts / ks
print(f"   Kiln best: {ks * 1e6:.1f} us (verified: {best['verified']}; fingerprint: {best['fingerprint']})")
print(f"   {t['library']}: {ts * 1e6:.1f} us (torch {t['torch']})")
print(f"   ratio (baseline time / Kiln time): {ratio:.3f}x -> goal 0.5x "
      f"{'MET' if ratio >= 0.5 else 'NOT MET'}")
PY
done
exit "$status"
