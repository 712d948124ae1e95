# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(query: T.Buffer((1, 64, 12, 128), "float32"), value: T.Buffer((1, 64, 12, 128), "float32"), C: T.Buffer((1, 12, 64, 64), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    query_T = T.sblock_alloc_buffer((1, 12, 64, 128))
    value_T = T.sblock_alloc_buffer((1, 12, 128, 64))
    for b in range(1):
        for h_0 in T.parallel(3):
            for h_1, l, d_0 in T.grid(4, 64, 32):
                for d_1 in T.vectorized(4):
                    with T.sblock("query_T"):
                        v_b = T.axis.spatial(1, b)
                        v_h = T.axis.spatial(12, h_0 * 4 + h_1)
                        v_l = T.axis.spatial(64, l)
                        v_d = T.axis.spatial(128, d_0 * 4 + d_1)
                        T.reads(query[v_b, v_l, v_h, v_d])
                        T.writes(query_T[v_b, v_h, v_l, v_d])
                        query_T[v_b, v_h, v_l, v_d] = query[v_b, v_l, v_h, v_d]
    for b in range(1):
        for h_0 in T.parallel(3):
            for h_1, d, l_0 in T.grid(4, 128, 16):
                for l_1 in T.vectorized(4):
                    with T.sblock("value_T"):
                        v_b = T.axis.spatial(1, b)
                        v_h = T.axis.spatial(12, h_0 * 4 + h_1)
                        v_d = T.axis.spatial(128, d)
                        v_l = T.axis.spatial(64, l_0 * 4 + l_1)
                        T.reads(value[v_b, v_l, v_h, v_d])
                        T.writes(value_T[v_b, v_h, v_d, v_l])
                        value_T[v_b, v_h, v_d, v_l] = value[v_b, v_l, v_h, v_d]
    for b in range(1):
        for h_0 in T.parallel(3):
            for h_1, i, j in T.grid(4, 64, 64):
                for k in T.unroll(128):
                    with T.sblock("C"):
                        v_b = T.axis.spatial(1, b)
                        v_h = T.axis.spatial(12, h_0 * 4 + h_1)
                        v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                        T.reads(query_T[v_b, v_h, v_i, v_k], value_T[v_b, v_h, v_k, v_j])
                        T.writes(C[v_b, v_h, v_i, v_j])
                        with T.init():
                            C[v_b, v_h, v_i, v_j] = T.float32(0.0)
                        C[v_b, v_h, v_i, v_j] = C[v_b, v_h, v_i, v_j] + query_T[v_b, v_h, v_i, v_k] * value_T[v_b, v_h, v_k, v_j]
