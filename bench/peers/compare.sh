#!/usr/bin/env bash
# Kiln against TVM MetaSchedule on this machine, in the same run: tunes each
# workload with the same trial budget in both (Kiln: `kiln tune`, its default
# strategy; TVM: bench/peers/tvm_metaschedule.py, evolutionary search + XGB),
# then prints per workload both bests (GFLOP/s, from each tool's own re-timed
# best kernel: Kiln's final re-measure, TVM's time_evaluator) and their share
# of the machine's fp32 FMA peak measured first (bench/fma_peak_bench.cc),
# both tuning wall times, and the ratios against the goals of issue 17:
# Kiln's best >= 2x TVM's, in <= 0.5x TVM's wall time.
#
# Usage: bench/peers/compare.sh [TRIALS] [WORKLOAD...]
#   TRIALS    default 256
#   WORKLOAD  default GMM:3 C2D:0
# Environment:
#   TVM_PYTHON  python of a virtual environment with apache-tvm 0.27
#               (tests/data/tvm/README.md); default ../tvm-venv/bin/python
#   KILN        kiln binary (default build/tools/kiln)
#   FMA_PEAK    fma_peak_bench binary (default build/bench/fma_peak_bench; without
#               it no peak share is printed)
#   WORK_DIR    where databases and logs go (default a fresh temp dir)
#   SEED        search seed of both (default 1)
#   KILN_ARGS   more flags for `kiln tune` (e.g. "--prior-model avx512": a cost
#               model trained without GMM:3 and C2D:0, configs/models/README.md)
# Both tools get every core (num-cores = nproc) and run one after the other,
# never at once. Optional tooling: Kiln does not depend on TVM.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
trials="${1:-256}"
shift || true
workloads=("$@")
[[ ${#workloads[@]} -gt 0 ]] || workloads=(GMM:3 C2D:0)
tvm_python="${TVM_PYTHON:-$root/../tvm-venv/bin/python}"
kiln="${KILN:-$root/build/tools/kiln}"
work="${WORK_DIR:-$(mktemp -d -t kiln-vs-tvm.XXXXXX)}"
seed="${SEED:-1}"
read -r -a kiln_args <<<"${KILN_ARGS:-}"
cores="$(nproc)"
if [[ ! -x "$tvm_python" ]]; then
  echo "compare: no TVM python at $tvm_python (set TVM_PYTHON; see tests/data/tvm/README.md)" >&2
  exit 2
fi
if [[ ! -x "$kiln" ]]; then
  echo "compare: no kiln at $kiln (build first: scripts/build.sh)" >&2
  exit 2
fi
fma_peak="${FMA_PEAK:-$root/build/bench/fma_peak_bench}"
mkdir -p "$work"
echo "compare: $trials trials, seed $seed, $cores cores, work dir $work${KILN_ARGS:+, kiln tune $KILN_ARGS}"
peak=0
if [[ -x "$fma_peak" ]]; then
  "$fma_peak" --threads "$cores" --json >"$work/fma_peak.json"
  peak=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["gflops"])' "$work/fma_peak.json")
  echo "fp32 FMA peak: $peak GFLOP/s ($cores threads, bench/fma_peak_bench.cc)"
fi
status=0
for w in "${workloads[@]}"; do
  tag="${w/:/_}"
  "$kiln" tune --workload "$w" --target host --trials "$trials" --seed "$seed" \
    --db "$work/kiln_$tag.db" --json "${kiln_args[@]}" >"$work/kiln_$tag.json" 2>"$work/kiln_$tag.log"
  "$tvm_python" "$root/bench/peers/tvm_metaschedule.py" --workload "$w" --trials "$trials" \
    --seed "$seed" --cores "$cores" --work-dir "$work/tvm_$tag" \
    >"$work/tvm_$tag.json" 2>"$work/tvm_$tag.log"
  # One line per workload; the ratios and met / not met.
  if ! python3 - "$w" "$work/kiln_$tag.json" "$work/tvm_$tag.json" "$peak" <<'PY'
import json, sys
name, kiln_path, tvm_path, peak = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
k = json.load(open(kiln_path))
t = json.loads(open(tvm_path).read().strip().splitlines()[-1])
best = k.get("best")
if not best:
    sys.exit(f"{name}: Kiln stored no best record")
k_ms = best["median_seconds"] * 1e3
# Both rates from TVM's FLOP count of the same workload.
k_gflops = t["gflops"] * t["best_ms"] / k_ms
speed = t["best_ms"] / k_ms
time_ratio = k["seconds"] / t["tune_seconds"]
share = lambda g: f", {100 * g / peak:.0f}% of peak" if peak > 0 else ""
print(f"{name}: Kiln {k_gflops:.1f} GFLOP/s ({k_ms:.3f} ms{share(k_gflops)}) tuned in {k['seconds']:.0f} s | "
      f"TVM {t['gflops']:.1f} GFLOP/s ({t['best_ms']:.3f} ms{share(t['gflops'])}) tuned in {t['tune_seconds']:.0f} s | "
      f"speed {speed:.2f}x (goal >= 2: {'met' if speed >= 2 else 'not met'}), "
      f"wall time {time_ratio:.2f}x (goal <= 0.5: {'met' if time_ratio <= 0.5 else 'not met'})")
PY
  then
    status=1
  fi
done
exit $status
