"""Loads a TVM MetaSchedule JSON database written by `kiln db export
--format tvm` and has TVM apply its best record to TVM's own GMM:0 workload.
Exits 0 when TVM found and applied a record; prints what it applied.

Usage: python check_export.py DIR
"""

import os
import sys

import tvm
from tvm.s_tir import meta_schedule as ms
from tvm.s_tir.meta_schedule.testing import te_workload


def main():
    out = sys.argv[1]
    db = ms.database.JSONDatabase(os.path.join(out, "database_workload.json"),
                                  os.path.join(out, "database_tuning_record.json"),
                                  allow_missing=False)
    mod = tvm.IRModule({"main": te_workload.create_te_workload("GMM", 0)})
    target = tvm.target.Target({"kind": "llvm", "num-cores": 2})
    if not db.has_workload(mod):
        print("TVM does not find GMM:0 in the exported database")
        return 1
    rec = db.query_tuning_record(mod, target, "main")
    if rec is None:
        print("query_tuning_record found no record")
        return 1
    sch = db.query_schedule(mod, target, "main")
    if sch is None:
        print("query_schedule found no schedule")
        return 1
    try:
        tvm.ir.assert_structural_equal(sch.mod, mod)
        print("the applied schedule left the workload unchanged")
        return 1
    except ValueError:
        pass  # scheduled: not the workload any more
    print("records:", len(db), "best run_secs:", [float(s) for s in rec.run_secs])
    print(sch.trace)
    return 0


if __name__ == "__main__":
    sys.exit(main())
