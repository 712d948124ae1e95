# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(data: T.Buffer((1, 4096), "float32"), weight: T.Buffer((4096,), "float32"), T_rms_norm: T.Buffer((1, 4096), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    T_multiply_red = T.sblock_alloc_buffer((1,))
    rsqrt = T.sblock_alloc_buffer((1,))
    for i in range(1):
        for k1 in T.unroll(4096):
            with T.sblock("T_multiply_red"):
                v_i, v_k1 = T.axis.remap("SR", [i, k1])
                T.reads(data[v_i, v_k1])
                T.writes(T_multiply_red[v_i])
                with T.init():
                    T_multiply_red[v_i] = T.float32(0.0)
                T_multiply_red[v_i] = T_multiply_red[v_i] + data[v_i, v_k1] * data[v_i, v_k1]
    for i in range(1):
        with T.sblock("rsqrt"):
            v_i = T.axis.spatial(1, i)
            T.reads(T_multiply_red[v_i])
            T.writes(rsqrt[v_i])
            rsqrt[v_i] = T.rsqrt(T_multiply_red[v_i] / T.float32(4096.0) + T.float32(1.0000000000000001e-05))
    for i in range(1):
        for j_0 in T.parallel(512):
            for j_1_0 in range(2):
                for j_1_1 in T.vectorized(4):
                    with T.sblock("T_rms_norm"):
                        v_i = T.axis.spatial(1, i)
                        v_j = T.axis.spatial(4096, j_0 * 8 + j_1_0 * 4 + j_1_1)
                        T.reads(rsqrt[v_i], data[v_i, v_j], weight[v_j])
                        T.writes(T_rms_norm[v_i, v_j])
                        T_rms_norm[v_i, v_j] = rsqrt[v_i] * data[v_i, v_j] * weight[v_j]
