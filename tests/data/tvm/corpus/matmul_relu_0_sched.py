# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"), compute: T.Buffer((1024, 1024), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    C = T.sblock_alloc_buffer((1024, 1024))
    for i_0 in T.parallel(128):
        for i_1, j in T.grid(8, 1024):
            for k in T.unroll(1024):
                with T.sblock("C"):
                    v_i = T.axis.spatial(1024, i_0 * 8 + i_1)
                    v_j, v_k = T.axis.remap("SR", [j, k])
                    T.reads(A[v_i, v_k], B[v_k, v_j])
                    T.writes(C[v_i, v_j])
                    with T.init():
                        C[v_i, v_j] = T.float32(0.0)
                    C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
    for i0_0 in T.parallel(128):
        for i0_1, i1_0 in T.grid(8, 256):
            for i1_1 in T.vectorized(4):
                with T.sblock("compute"):
                    v_i0 = T.axis.spatial(1024, i0_0 * 8 + i0_1)
                    v_i1 = T.axis.spatial(1024, i1_0 * 4 + i1_1)
                    T.reads(C[v_i0, v_i1])
                    T.writes(compute[v_i0, v_i1])
                    compute[v_i0, v_i1] = T.max(C[v_i0, v_i1], T.float32(0.0))
