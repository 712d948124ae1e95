# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(A: T.Buffer((32, 1, 4096), "float32"), T_softmax_norm: T.Buffer((32, 1, 4096), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    T_softmax_maxelem = T.sblock_alloc_buffer((32, 1))
    T_softmax_exp = T.sblock_alloc_buffer((32, 1, 4096))
    T_softmax_expsum = T.sblock_alloc_buffer((32, 1))
    for i0_0 in T.parallel(4):
        for i0_1, i1 in T.grid(8, 1):
            for k in T.unroll(4096):
                with T.sblock("T_softmax_maxelem"):
                    v_i0 = T.axis.spatial(32, i0_0 * 8 + i0_1)
                    v_i1, v_k = T.axis.remap("SR", [i1, k])
                    T.reads(A[v_i0, v_i1, v_k])
                    T.writes(T_softmax_maxelem[v_i0, v_i1])
                    with T.init():
                        T_softmax_maxelem[v_i0, v_i1] = T.float32(-340282346638528859811704183484516925440.0)
                    T_softmax_maxelem[v_i0, v_i1] = T.max(T_softmax_maxelem[v_i0, v_i1], A[v_i0, v_i1, v_k])
    for i0_0 in T.parallel(4):
        for i0_1, i1, i2_0 in T.grid(8, 1, 1024):
            for i2_1 in T.vectorized(4):
                with T.sblock("T_softmax_exp"):
                    v_i0 = T.axis.spatial(32, i0_0 * 8 + i0_1)
                    v_i1 = T.axis.spatial(1, i1)
                    v_i2 = T.axis.spatial(4096, i2_0 * 4 + i2_1)
                    T.reads(A[v_i0, v_i1, v_i2], T_softmax_maxelem[v_i0, v_i1])
                    T.writes(T_softmax_exp[v_i0, v_i1, v_i2])
                    T_softmax_exp[v_i0, v_i1, v_i2] = T.exp(A[v_i0, v_i1, v_i2] - T_softmax_maxelem[v_i0, v_i1])
    for i0_0 in T.parallel(4):
        for i0_1, i1 in T.grid(8, 1):
            for k in T.unroll(4096):
                with T.sblock("T_softmax_expsum"):
                    v_i0 = T.axis.spatial(32, i0_0 * 8 + i0_1)
                    v_i1, v_k = T.axis.remap("SR", [i1, k])
                    T.reads(T_softmax_exp[v_i0, v_i1, v_k])
                    T.writes(T_softmax_expsum[v_i0, v_i1])
                    with T.init():
                        T_softmax_expsum[v_i0, v_i1] = T.float32(0.0)
                    T_softmax_expsum[v_i0, v_i1] = T_softmax_expsum[v_i0, v_i1] + T_softmax_exp[v_i0, v_i1, v_k]
    for i0_0 in T.parallel(4):
        for i0_1, i1, i2_0 in T.grid(8, 1, 1024):
            for i2_1 in T.vectorized(4):
                with T.sblock("T_softmax_norm"):
                    v_i0 = T.axis.spatial(32, i0_0 * 8 + i0_1)
                    v_i1 = T.axis.spatial(1, i1)
                    v_i2 = T.axis.spatial(4096, i2_0 * 4 + i2_1)
                    T.reads(T_softmax_exp[v_i0, v_i1, v_i2], T_softmax_expsum[v_i0, v_i1])
                    T.writes(T_softmax_norm[v_i0, v_i1, v_i2])
                    T.sblock_attr({"axis": 2})
                    T_softmax_norm[v_i0, v_i1, v_i2] = T_softmax_exp[v_i0, v_i1, v_i2] / T_softmax_expsum[v_i0, v_i1]
