#!/usr/bin/env bash
# Kiln against TVM MetaSchedule on this machine, in the same run: tunes each
# workload with the same trial budget in both (Kiln: `kiln tune`, its default
# strategy; TVM: bench/peers/tvm_metaschedule.py, evolutionary search + XGB),
# then re-times both bests side by side (RETIME_ROUNDS rounds, each tool
# first in half of them: Kiln's with `kiln db verify --top 1`, TVM's with
# tvm_metaschedule.py --retime-only, each its own runner's protocol) and
# prints per workload both bests (GFLOP/s, the median of the rounds) and
# their share of the machine's fp32 FMA peak measured first
# (bench/fma_peak_bench.cc), both tuning wall times, and the ratios against
# the goals of issue 17: Kiln's best >= 2x TVM's, in <= 0.5x TVM's wall
# time. The speed goal is judged on the re-timed bests: the tools tune one
# after the other, minutes apart, and this project's machine drifts by up to
# 15% in an hour (docs/ARCHITECTURE.md §10); each tool's own figure at the
# end of its tuning is printed too.
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
#   RETIME_ROUNDS  rounds of re-timing both bests (default 4; 0: judge on each
#               tool's figure at the end of its tuning)
# Both tools get every core (num-cores = nproc, and TVM_NUM_THREADS for TVM's
# runtime thread pool) and run one after the other,
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
rounds="${RETIME_ROUNDS:-4}"
[[ "$rounds" =~ ^[0-9]{1,3}$ ]] || { echo "compare: RETIME_ROUNDS must be a number, got '$rounds'" >&2; exit 2; }
rounds=$((10#$rounds))
read -r -a kiln_args <<<"${KILN_ARGS:-}"
cores="$(nproc)"
# TVM's runtime would otherwise size its thread pool to half the hardware
# threads on x86-64 (one on a 2-CPU machine); tvm_metaschedule.py sets it
# from --cores too and refuses to report when the pool differs.
export TVM_NUM_THREADS="$cores"
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
  # Both bests again, side by side; odd rounds Kiln first, even rounds TVM.
  retime_kiln() {
    "$kiln" db verify --db "$work/kiln_$tag.db" --workload "$w" --top 1 --json \
      >"$work/kiln_$tag.retime$1.json" 2>>"$work/kiln_$tag.log"
  }
  retime_tvm() {
    "$tvm_python" "$root/bench/peers/tvm_metaschedule.py" --workload "$w" --trials "$trials" \
      --seed "$seed" --cores "$cores" --work-dir "$work/tvm_$tag" --retime-only \
      >"$work/tvm_$tag.retime$1.json" 2>>"$work/tvm_$tag.log"
  }
  # Rounds in the order Kiln TVM, TVM Kiln, TVM Kiln, Kiln TVM, ... (ABBA:
  # each tool goes first in half of every four rounds).
  retimed=1
  for ((r = 1; r <= rounds && retimed; r++)); do
    if ((r % 4 < 2)); then order=(retime_kiln retime_tvm); else order=(retime_tvm retime_kiln); fi
    for step in "${order[@]}"; do
      if ! "$step" "$r"; then
        echo "compare: $w: $step failed in round $r (see $work/${step#retime_}_$tag.log)" >&2
        retimed=0
        break
      fi
    done
  done
  if ((!retimed)); then
    status=1
    continue
  fi
  # One line per workload; the ratios and met / not met.
  if ! python3 - "$w" "$work/kiln_$tag.json" "$work/tvm_$tag.json" "$peak" "$rounds" "$work" "$tag" <<'PY'
import json, statistics, sys
name, kiln_path, tvm_path = sys.argv[1], sys.argv[2], sys.argv[3]
peak, rounds, work, tag = float(sys.argv[4]), int(sys.argv[5]), sys.argv[6], sys.argv[7]
last_line = lambda path: json.loads(open(path).read().strip().splitlines()[-1])
k = json.load(open(kiln_path))
t = last_line(tvm_path)
best = k.get("best")
if not best:
    sys.exit(f"{name}: Kiln stored no best record")
k_tuned_ms, t_tuned_ms = best["median_seconds"] * 1e3, t["best_ms"]
flops = t["gflops"] * t["best_ms"] * 1e6  # TVM's FLOP count of the same workload, for both rates
if rounds > 0:
    k_rounds, t_rounds = [], []
    for r in range(1, rounds + 1):
        rec = json.load(open(f"{work}/kiln_{tag}.retime{r}.json"))["records"][0]
        if rec["outcome"] not in ("ok", "slower", "faster") or not rec.get("new_median"):
            sys.exit(f"{name}: re-timing Kiln's best failed in round {r}: {rec.get('message') or rec['outcome']}")
        k_rounds.append(rec["new_median"] * 1e3)
        t_rounds.append(last_line(f"{work}/tvm_{tag}.retime{r}.json")["best_ms"])
    k_ms, t_ms = statistics.median(k_rounds), statistics.median(t_rounds)
    fmt = lambda v: " ".join(f"{x:.3f}" for x in v)
    print(f"{name}: re-timed in {rounds} round(s), ms: Kiln {fmt(k_rounds)} | TVM {fmt(t_rounds)}")
    how = f"re-timed side by side, median of {rounds}; at the end of tuning Kiln {k_tuned_ms:.3f} ms, " \
          f"TVM {t_tuned_ms:.3f} ms, {t_tuned_ms / k_tuned_ms:.2f}x"
else:
    k_ms, t_ms = k_tuned_ms, t_tuned_ms
    how = "each at the end of its tuning"
gf = lambda ms: flops / ms / 1e6
speed = t_ms / k_ms
time_ratio = k["seconds"] / t["tune_seconds"]
share = lambda g: f", {100 * g / peak:.0f}% of peak" if peak > 0 else ""
print(f"{name}: Kiln {gf(k_ms):.1f} GFLOP/s ({k_ms:.3f} ms{share(gf(k_ms))}) tuned in {k['seconds']:.0f} s | "
      f"TVM {gf(t_ms):.1f} GFLOP/s ({t_ms:.3f} ms{share(gf(t_ms))}) tuned in {t['tune_seconds']:.0f} s | "
      f"speed {speed:.2f}x (goal >= 2: {'met' if speed >= 2 else 'not met'}), "
      f"wall time {time_ratio:.2f}x (goal <= 0.5: {'met' if time_ratio <= 0.5 else 'not met'}) "
      f"[{how}]")
PY
  then
    status=1
  fi
done
exit $status
