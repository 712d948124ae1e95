"""Regenerates the TVMScript corpus in this folder with pip's apache-tvm.

Every workload of Kiln's suite (ir/workloads/suite.h) is built the way TVM
builds it (te_workload.py for TVM's benchmark names, TE for the LLM extras),
printed as TVM prints it, unscheduled (`<name>_<index>.py`) and after a few
schedule primitives (`<name>_<index>_sched.py`). A couple of GPU-style
schedules (thread bindings, shared and local buffers) are written as
`gpu_*.py`. See README.md for the pinned versions.

Usage: python generate.py [OUT_DIR]   (default: corpus/ next to this script;
fuzz seeds go to fuzz_seeds/ next to it)
"""

import os
import sys

import tvm
from tvm import s_tir, te, tirx, topi
from tvm.s_tir.meta_schedule.testing import te_workload


def gemv():
    a = te.placeholder((1, 4096), name="A")
    b = te.placeholder((4096, 4096), name="B")
    k = te.reduce_axis((0, 4096), name="k")
    c = te.compute((1, 4096), lambda i, j: te.sum(a[i, k] * b[j, k], axis=k), name="NT_matmul")
    return te.create_prim_func([a, b, c])


def rms():
    data = te.placeholder((1, 4096), name="data")
    weight = te.placeholder((4096,), name="weight")
    k = te.reduce_axis((0, 4096), name="k1")
    red = te.compute((1,), lambda i: te.sum(data[i, k] * data[i, k], axis=k), name="T_multiply_red")
    rs = te.compute((1,), lambda i: tirx.rsqrt(red[i] / tirx.const(4096.0, "float32")
                                               + tirx.const(1e-5, "float32")), name="rsqrt")
    out = te.compute((1, 4096), lambda i, j: rs[i] * data[i, j] * weight[j], name="T_rms_norm")
    return te.create_prim_func([data, weight, out])


def attn_softmax():
    a = te.placeholder((32, 1, 4096), name="A")
    return te.create_prim_func([a, topi.nn.softmax(a, axis=2)])


def suite():
    """(name, index, PrimFunc) for every suite workload, in suite order."""
    out = []
    for name, (_, configs) in te_workload.CONFIGS.items():
        if name == "C2D_WIN_NHWC":  # not part of Kiln's suite
            continue
        for index in range(len(configs)):
            out.append((name, index, te_workload.create_te_workload(name, index)))
    out.append(("matmul", 0, te.create_prim_func(te_workload.matmul(1024, 1024, 1024))))
    out.append(("matmul_relu", 0, te.create_prim_func(te_workload.matmul_relu(1024, 1024, 1024))))
    out.append(("conv2d_nchw", 0,
                te.create_prim_func(te_workload.conv2d_nchw(1, 56, 56, 64, 64, 3, 3, 1, 1))))
    out.append(("GEMV", 0, gemv()))
    out.append(("RMS", 0, rms()))
    out.append(("ATTN_SFM", 0, attn_softmax()))
    return out


def extent(loop_sref_loop):
    return int(loop_sref_loop.extent)


def schedule_cpu(func):
    """A few primitives every workload admits: inline the padding blocks,
    split and parallelize the outer loop of each remaining block, unroll
    its innermost loop."""
    sch = s_tir.Schedule(tvm.IRModule({"main": func}))
    root = sch.get_sblock("root")
    for blk in sch.get_child_blocks(root):
        name = sch.get(blk).name_hint
        if name.startswith("PadInput") or name.startswith("pad_temp") or name == "data_pad":
            sch.compute_inline(blk)
    for blk in sch.get_child_blocks(root):
        loops = sch.get_loops(blk)
        block = sch.get(blk)
        # create_prim_func orders the loops as the block's iteration
        # variables, spatial ones first: only those may run in parallel.
        spatial = 0
        for iv in block.iter_vars:
            if iv.iter_type != 0 or spatial >= len(loops):
                break
            spatial += 1
        target = next((l for l in loops[:spatial] if extent(sch.get(l)) > 1), None)
        if target is not None:
            n = extent(sch.get(target))
            factor = next((f for f in (8, 4, 2) if n % f == 0 and n > f), None)
            if factor is not None:
                lo, _ = sch.split(target, [None, factor])
                sch.parallel(lo)
            else:
                sch.parallel(target)
        loops = sch.get_loops(blk)
        if spatial == len(block.iter_vars) and len(loops) > 1 and extent(sch.get(loops[-1])) % 4 == 0:
            _, vec = sch.split(loops[-1], [None, 4])
            sch.vectorize(vec)
        elif len(loops) > 1:
            sch.unroll(loops[-1])
    return sch.mod["main"]


def schedule_gpu_matmul():
    """GMM_0 bound to blocks and threads, with a shared-memory read cache and
    a local write cache."""
    sch = s_tir.Schedule(tvm.IRModule({"main": te_workload.create_te_workload("GMM", 0)}))
    blk = sch.get_sblock("Z")
    b, i, j, k = sch.get_loops(blk)
    i0, i1 = sch.split(i, [None, 16])
    j0, j1 = sch.split(j, [None, 16])
    k0, k1 = sch.split(k, [None, 8])
    sch.reorder(b, i0, j0, i1, j1, k0, k1)
    bx = sch.fuse(b, i0, j0)
    tx = sch.fuse(i1, j1)
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    sch.cache_write(blk, 0, "local")
    sch.cache_read(blk, 0, "shared")
    return sch.mod["main"]


def fuzz_seeds(seed_dir):
    """Small inputs for fuzz/tvm_import_fuzz.cc (scripts/fuzz.sh seeds it from
    here): raw IRModule graphs of tiny functions, scheduled and not. (The
    seed db_gmm.json, a workload file, a blank line and two records of
    metaschedule_gmm/, is written by hand from those files.)"""
    os.makedirs(seed_dir, exist_ok=True)
    a = te.placeholder((8,), name="A")
    b = te.compute((8,), lambda i: tirx.max(a[i] * 2.0, tirx.const(0.0, "float32")), name="B")
    tiny = te.create_prim_func([a, b])
    gmm = te_workload.batch_matmul_nkkm(1, 4, 4, 4)
    gmm = te.create_prim_func(gmm) if not isinstance(gmm, tirx.PrimFunc) else gmm
    for name, func in (("graph_tiny", tiny), ("graph_gmm4", gmm),
                       ("graph_gmm4_sched", schedule_cpu(gmm))):
        with open(os.path.join(seed_dir, name + ".json"), "w", encoding="utf-8") as f:
            f.write(tvm.ir.save_json(tvm.IRModule({"main": func})))


def write(out_dir, name, func):
    with open(os.path.join(out_dir, name + ".py"), "w", encoding="utf-8") as f:
        f.write(func.script())
        f.write("\n")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus")
    os.makedirs(out_dir, exist_ok=True)
    for name, index, func in suite():
        write(out_dir, f"{name}_{index}", func)
        write(out_dir, f"{name}_{index}_sched", schedule_cpu(func))
    write(out_dir, "gpu_GMM_0_sched", schedule_gpu_matmul())
    # One module as TVM prints an IRModule: @I.ir_module around `main`.
    fuzz_seeds(os.path.join(here, "fuzz_seeds"))
    mod = tvm.IRModule({"main": te_workload.create_te_workload("GMM", 0)})
    with open(os.path.join(out_dir, "module_GMM_0.py"), "w", encoding="utf-8") as f:
        f.write(mod.script())
        f.write("\n")


if __name__ == "__main__":
    main()
