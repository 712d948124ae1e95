# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(X: T.Buffer((1, 128, 128), "float32"), Y: T.Buffer((1, 128, 128), "float32"), Z: T.Buffer((1, 128, 128), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    Z_local = T.sblock_alloc_buffer((1, 128, 128), scope="local")
    X_shared = T.sblock_alloc_buffer((1, 128, 128), scope="shared")
    for ax0, ax1, ax2 in T.grid(1, 128, 128):
        with T.sblock("X_shared"):
            v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            T.reads(X[v0, v1, v2])
            T.writes(X_shared[v0, v1, v2])
            X_shared[v0, v1, v2] = X[v0, v1, v2]
    for b_i_0_j_0_fused in T.thread_binding(64, thread="blockIdx.x"):
        for i_1_j_1_fused in T.thread_binding(256, thread="threadIdx.x"):
            for k_0, k_1 in T.grid(16, 8):
                with T.sblock("Z"):
                    v_b = T.axis.spatial(1, 0)
                    v_i = T.axis.spatial(128, b_i_0_j_0_fused // 8 * 16 + i_1_j_1_fused // 16)
                    v_j = T.axis.spatial(128, b_i_0_j_0_fused % 8 * 16 + i_1_j_1_fused % 16)
                    v_k = T.axis.reduce(128, k_0 * 8 + k_1)
                    T.reads(X_shared[v_b, v_i, v_k], Y[v_b, v_k, v_j])
                    T.writes(Z_local[v_b, v_i, v_j])
                    with T.init():
                        Z_local[v_b, v_i, v_j] = T.float32(0.0)
                    Z_local[v_b, v_i, v_j] = Z_local[v_b, v_i, v_j] + X_shared[v_b, v_i, v_k] * Y[v_b, v_k, v_j]
    for ax0, ax1, ax2 in T.grid(1, 128, 128):
        with T.sblock("Z_local"):
            v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            T.reads(Z_local[v0, v1, v2])
            T.writes(Z[v0, v1, v2])
            Z[v0, v1, v2] = Z_local[v0, v1, v2]
