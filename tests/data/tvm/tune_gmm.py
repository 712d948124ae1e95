"""A short MetaSchedule tuning run of GMM:0 with pip's apache-tvm 0.27; its
JSON database (database_workload.json, database_tuning_record.json) is the
test data in metaschedule_gmm/. See README.md.

Usage: python tune_gmm.py WORK_DIR
"""

import sys

import tvm
from tvm.s_tir import meta_schedule as ms
from tvm.s_tir.meta_schedule.testing import te_workload


def main():
    mod = tvm.IRModule({"main": te_workload.create_te_workload("GMM", 0)})
    target = tvm.target.Target({"kind": "llvm", "num-cores": 2})
    # Generous time limits: the machine this ran on was shared by several
    # builds, and TVM's default 30 s build limit failed every candidate.
    builder = ms.builder.LocalBuilder(max_workers=1, timeout_sec=600)
    runner = ms.runner.LocalRunner(timeout_sec=300)
    ms.tir_integration.tune_tir(mod=mod, target=target, work_dir=sys.argv[1],
                                max_trials_global=16, num_trials_per_iter=8,
                                builder=builder, runner=runner,
                                cost_model="random", seed=7)


if __name__ == "__main__":
    main()
