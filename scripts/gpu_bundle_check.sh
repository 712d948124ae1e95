#!/usr/bin/env bash
# Checks a bundle of scripts/gpu_bundle.sh on this machine as far as it goes
# without a GPU: unpacks it, runs kiln from it with a bare environment, checks
# that every library it loads comes from the bundle (or the CUDA Toolkit's
# folder, or is the driver), builds a CUDA batch with --build-only, and
# expects `kiln run` on the GPU to stop with the clear no-GPU error.
#
#   bash scripts/gpu_bundle_check.sh [ARCHIVE]   # default build/gpu-bundle/kiln-gpu.tar.xz
set -euo pipefail
cd "$(dirname "$0")/.."
archive="${1:-build/gpu-bundle/kiln-gpu.tar.xz}"
[ -f "$archive" ] || { echo "gpu_bundle_check: no $archive" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xJf "$archive"
b="$work/kiln-gpu"
# A bare environment: nothing of this machine's library path leaks in.
bare=(env -i "PATH=/usr/bin:/bin:${CUDA_HOME:-/usr/local/cuda}/bin" "HOME=$work" "TMPDIR=$work"
      "LD_LIBRARY_PATH=$b/lib")
[ -n "${KILN_CUDA_LIB:-}" ] && bare+=("KILN_CUDA_LIB=$KILN_CUDA_LIB")

"${bare[@]}" "$b/bin/kiln" --version
# Where each loaded library came from (the loader's own trace).
"${bare[@]}" LD_DEBUG=libs "$b/bin/kiln" --version 2>"$work/ld.log" >/dev/null
# The wrapper's shell and its helpers log under their own programs: keep the
# libraries initialized for the program the loader hands libexec/kiln to.
awk '$2 == "calling" && $3 == "init:" { inits[$1] = inits[$1] "\n" $4 }
     $2 == "transferring" { if ($4 ~ /libexec\/kiln$/) printf "%s", inits[$1]; inits[$1] = "" }' \
  "$work/ld.log" | grep . | sort -u >"$work/loaded"
[ -s "$work/loaded" ] || { echo "gpu_bundle_check: no loader trace of kiln" >&2; exit 1; }
outside="$(grep -v "^$b/lib/" "$work/loaded" | grep -v -E '/lib(nvrtc|nvJitLink)[^/]*$' || true)"
if [ -n "$outside" ]; then
  echo "gpu_bundle_check: kiln loaded libraries from outside the bundle:" >&2
  echo "$outside" >&2
  exit 1
fi
echo "gpu_bundle_check: kiln loads $(wc -l <"$work/loaded") libraries, all from the bundle or the CUDA Toolkit"

"${bare[@]}" "$b/bin/kiln" tune -w GMM:0 --target 'cuda -arch=sm_90' --build-only \
  --trials-per-iter 4 --seed 1 | tail -1
set +e
"${bare[@]}" "$b/bin/kiln" run -w SFM:0 --target 'cuda -arch=sm_90' --number 1 --repeat 1 \
  >"$work/run.out" 2>&1
rc=$?
set -e
cat "$work/run.out"
if [ "$rc" -ne 0 ] && grep -q "this machine cannot run CUDA kernels" "$work/run.out"; then
  echo "gpu_bundle_check: ok (no GPU here: kiln says so and exits $rc)"
elif command -v nvidia-smi >/dev/null; then
  echo "gpu_bundle_check: ok (a GPU is here: kiln went past the GPU check)"
else
  echo "gpu_bundle_check: kiln run did not stop with the no-GPU message (exit $rc)" >&2
  exit 1
fi
