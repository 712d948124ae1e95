"""TVM MetaSchedule as a peer: tunes one workload of Kiln's suite with pip's
apache-tvm 0.27 (evolutionary search + XGBoost, TVM's defaults) for a trial
budget, re-times the best kernel, and prints one JSON line.

Optional tooling, never a dependency of Kiln: run it from a virtual
environment set up as tests/data/tvm/README.md says (apache-tvm 0.27.0,
apache-tvm-ffi pinned to 0.1.14.post1, psutil, cloudpickle, and xgboost for
TVM's cost model: the CPU-only wheel `xgboost-cpu` does; without it TVM's
first model update fails after the first batch).
bench/peers/compare.sh runs it next to `kiln tune` on the same workloads.

Usage:
  python tvm_metaschedule.py --workload GMM:3 --trials 256 --work-dir DIR
      [--cores 2] [--seed 1] [--per-iter 64] [--retime-only]

The workload is built the way Kiln's suite builds it (ir/workloads/suite.h
follows TVM's te_workload configs, so "GMM:3" is te_workload's GMM config 3:
batch 1, 1024 x 1024 x 1024). The target is the host CPU as LLVM names it,
with num-cores, as Kiln's native target is.

Printed: {"workload", "trials", "records", "best_ms", "gflops",
"tune_seconds", "mcpu", "cores", "threads"} (threads: the size of TVM's
runtime thread pool, set to --cores through TVM_NUM_THREADS). best_ms is the median of 10 repeats of
at least 100 ms each of the best kernel, timed after tuning with TVM's
time_evaluator on fresh random inputs; tune_seconds is the wall time of
tune_tir alone.
"""

import argparse
import json
import os
import re
import sys
import time

import numpy as np

try:
    import xgboost  # noqa: F401  (TVM's XGBModel imports it at its first update)
except ImportError:
    sys.exit("tvm_metaschedule.py: TVM's cost model needs xgboost in this venv "
             "(pip install xgboost-cpu; see tests/data/tvm/README.md)")

import tvm
from tvm.s_tir import meta_schedule as ms
from tvm.s_tir.meta_schedule.testing import te_workload
from tvm.target import codegen


def flop_count(mod):
    """Floating-point operations of the workload, as TVM's estimator counts
    them (multiply-add = 2)."""
    try:
        from tvm.s_tir.analysis import estimate_tir_flops  # 0.27
    except ImportError:  # older layouts
        from tvm.tir.analysis import estimate_tir_flops
    return float(estimate_tir_flops(mod))


def param_buffers(func):
    """(shape, dtype) of each parameter. TVM 0.27's Python PrimFunc no longer
    exposes buffer_map, so the signature is read from the TVMScript text
    (`def main(A: T.Buffer((1, 1024, 1024), "float32"), ...)`)."""
    if hasattr(func, "buffer_map"):
        return [([int(x) for x in func.buffer_map[p].shape], str(func.buffer_map[p].dtype))
                for p in func.params]
    header = func.script().split("def main(", 1)[1].split("):", 1)[0]
    found = re.findall(r'T\.Buffer\(\(([^)]*)\),\s*"([a-z0-9]+)"\)', header)
    if len(found) != len(func.params):
        sys.exit(f"tvm_metaschedule: cannot read the parameters from {header!r}")
    return [([int(x) for x in dims.split(",") if x.strip()], dtype) for dims, dtype in found]


def random_args(func, dev):
    args = []
    rng = np.random.default_rng(1)
    for shape, dtype in param_buffers(func):
        data = rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
        args.append(tvm.runtime.tensor(data, dev) if hasattr(tvm.runtime, "tensor")
                    else tvm.nd.array(data, dev))
    return args


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", required=True, help="NAME:INDEX of Kiln's suite, e.g. GMM:3")
    ap.add_argument("--trials", type=int, required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--cores", type=int, default=os.cpu_count())
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--retime-only", action="store_true",
                    help="re-time the best record of the database in --work-dir; no tuning")
    ap.add_argument("--per-iter", type=int, default=64,
                    help="num_trials_per_iter (TVM's default is 64)")
    a = ap.parse_args()
    # TVM's CPU runtime sizes its thread pool from TVM_NUM_THREADS, else from
    # half the hardware threads on x86-64 (it assumes hyper-threading), which
    # on a 2-CPU machine is one thread while Kiln's kernels use both. Set
    # before anything runs: the pool is made at the first parallel launch, and
    # the runner's worker processes inherit the variable.
    os.environ["TVM_NUM_THREADS"] = str(a.cores)

    name, _, index = a.workload.partition(":")
    if not index.isdigit():
        sys.exit(f"tvm_metaschedule: --workload wants NAME:INDEX, got {a.workload!r}")
    if name not in te_workload.CONFIGS:
        sys.exit(f"tvm_metaschedule: TVM's te_workload has no {name!r}")
    func = te_workload.create_te_workload(name, int(index))
    mod = tvm.IRModule({"main": func})
    mcpu = codegen.llvm_get_system_cpu()
    # 0.27 takes targets as JSON dicts.
    target = tvm.target.Target({"kind": "llvm", "mcpu": mcpu, "num-cores": a.cores})

    if a.retime_only:
        # The database a finished run left in --work-dir: re-time its best
        # without tuning again (tune_seconds is then unknown: null).
        database = ms.database.JSONDatabase(
            path_workload=os.path.join(a.work_dir, "database_workload.json"),
            path_tuning_record=os.path.join(a.work_dir, "database_tuning_record.json"),
            allow_missing=False)
        tune_seconds = None
    else:
        # TVM's builder and runner with TVM's evaluator defaults; only the time
        # limits are raised (the default 30 s build limit fails candidates on a
        # busy 2-core machine, which would make TVM look worse than it is).
        builder = ms.builder.LocalBuilder(timeout_sec=600)
        runner = ms.runner.LocalRunner(timeout_sec=300)
        start = time.monotonic()
        database = ms.tir_integration.tune_tir(
            mod=mod, target=target, work_dir=a.work_dir, max_trials_global=a.trials,
            num_trials_per_iter=min(a.per_iter, a.trials), builder=builder, runner=runner,
            seed=a.seed)
        tune_seconds = time.monotonic() - start

    sch = ms.tir_integration.compile_tir(database, mod, target)
    if sch is None:
        sys.exit("tvm_metaschedule: no valid record in TVM's database")
    rt = tvm.compile(sch.mod, target=target)
    dev = tvm.cpu(0)
    args = random_args(func, dev)
    # 0.27's tvm.compile returns an Executable; its runtime module times.
    lib = rt.mod if hasattr(rt, "mod") and not hasattr(rt, "time_evaluator") else rt
    timer = lib.time_evaluator("main", dev, number=1, repeat=10, min_repeat_ms=100)
    best_s = float(np.median(timer(*args).results))
    records = len(database.get_all_tuning_records())
    threads = int(tvm.get_global_func("runtime.NumThreads")())
    if threads != a.cores:
        sys.exit(f"tvm_metaschedule: TVM's runtime ran {threads} thread(s), not --cores {a.cores}")
    print(json.dumps({
        "workload": a.workload, "trials": a.trials, "records": records,
        "best_ms": best_s * 1e3, "gflops": flop_count(mod) / best_s / 1e9,
        "tune_seconds": tune_seconds, "mcpu": mcpu, "cores": a.cores, "threads": threads,
    }))


if __name__ == "__main__":
    main()
