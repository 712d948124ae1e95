# from tvm.script import tir as T

@T.prim_func
def main(data: T.Buffer((1, 4096), "float32"), weight: T.Buffer((4096,), "float32"), T_rms_norm: T.Buffer((1, 4096), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    T_multiply_red = T.alloc_buffer((1,))
    rsqrt = T.alloc_buffer((1,))
    for ax0, k1 in T.grid(1, 4096):
        with T.block("T_multiply_red"):
            v_ax0, v_k1 = T.axis.remap("SR", [ax0, k1])
            T.reads(data[v_ax0, v_k1])
            T.writes(T_multiply_red[v_ax0])
            with T.init():
                T_multiply_red[v_ax0] = T.float32(0.0)
            T_multiply_red[v_ax0] = T_multiply_red[v_ax0] + data[v_ax0, v_k1] * data[v_ax0, v_k1]
    for ax0 in range(1):
        with T.block("rsqrt"):
            v_ax0 = T.axis.remap("S", [ax0])
            T.reads(T_multiply_red[v_ax0])
            T.writes(rsqrt[v_ax0])
            rsqrt[v_ax0] = T.rsqrt(T_multiply_red[v_ax0] / T.float32(4096.0) + T.float32(1e-05))
    for ax0, ax1 in T.grid(1, 4096):
        with T.block("T_rms_norm"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(rsqrt[v_ax0], data[v_ax0, v_ax1], weight[v_ax1])
            T.writes(T_rms_norm[v_ax0, v_ax1])
            T_rms_norm[v_ax0, v_ax1] = rsqrt[v_ax0] * data[v_ax0, v_ax1] * weight[v_ax1]
