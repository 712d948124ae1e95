# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(A: T.Buffer((1024, 1024), "float32"), T_softmax_norm: T.Buffer((1024, 1024), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    T_softmax_maxelem = T.sblock_alloc_buffer((1024,))
    T_softmax_exp = T.sblock_alloc_buffer((1024, 1024))
    T_softmax_expsum = T.sblock_alloc_buffer((1024,))
    for i0_0 in T.parallel(128):
        for i0_1 in range(8):
            for k in T.unroll(1024):
                with T.sblock("T_softmax_maxelem"):
                    v_i0 = T.axis.spatial(1024, i0_0 * 8 + i0_1)
                    v_k = T.axis.reduce(1024, k)
                    T.reads(A[v_i0, v_k])
                    T.writes(T_softmax_maxelem[v_i0])
                    with T.init():
                        T_softmax_maxelem[v_i0] = T.float32(-340282346638528859811704183484516925440.0)
                    T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], A[v_i0, v_k])
    for i0_0 in T.parallel(128):
        for i0_1, i1_0 in T.grid(8, 256):
            for i1_1 in T.vectorized(4):
                with T.sblock("T_softmax_exp"):
                    v_i0 = T.axis.spatial(1024, i0_0 * 8 + i0_1)
                    v_i1 = T.axis.spatial(1024, i1_0 * 4 + i1_1)
                    T.reads(A[v_i0, v_i1], T_softmax_maxelem[v_i0])
                    T.writes(T_softmax_exp[v_i0, v_i1])
                    T_softmax_exp[v_i0, v_i1] = T.exp(A[v_i0, v_i1] - T_softmax_maxelem[v_i0])
    for i0_0 in T.parallel(128):
        for i0_1 in range(8):
            for k in T.unroll(1024):
                with T.sblock("T_softmax_expsum"):
                    v_i0 = T.axis.spatial(1024, i0_0 * 8 + i0_1)
                    v_k = T.axis.reduce(1024, k)
                    T.reads(T_softmax_exp[v_i0, v_k])
                    T.writes(T_softmax_expsum[v_i0])
                    with T.init():
                        T_softmax_expsum[v_i0] = T.float32(0.0)
                    T_softmax_expsum[v_i0] = T_softmax_expsum[v_i0] + T_softmax_exp[v_i0, v_k]
    for i0_0 in T.parallel(128):
        for i0_1, i1_0 in T.grid(8, 256):
            for i1_1 in T.vectorized(4):
                with T.sblock("T_softmax_norm"):
                    v_i0 = T.axis.spatial(1024, i0_0 * 8 + i0_1)
                    v_i1 = T.axis.spatial(1024, i1_0 * 4 + i1_1)
                    T.reads(T_softmax_exp[v_i0, v_i1], T_softmax_expsum[v_i0])
                    T.writes(T_softmax_norm[v_i0, v_i1])
                    T.sblock_attr({"axis": 1})
                    T_softmax_norm[v_i0, v_i1] = T_softmax_exp[v_i0, v_i1] / T_softmax_expsum[v_i0]
