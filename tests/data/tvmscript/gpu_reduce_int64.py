# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((T.int64(256), T.int64(1000)), "float16"), B: T.Buffer((T.int64(256),), "float16")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    B_shared = T.alloc_buffer((T.int64(256),), "float16", scope="shared")
    for ax0_fused in T.thread_binding(T.int64(256), thread="blockIdx.x"):
        for k_0 in range(T.int64(8)):
            for k_1 in T.thread_binding(T.int64(128), thread="threadIdx.x"):
                with T.block("B"):
                    v_ax0 = T.axis.spatial(T.int64(256), ax0_fused)
                    v_k = T.axis.reduce(T.int64(1000), k_0 * T.int64(128) + k_1)
                    T.where(k_0 * T.int64(128) + k_1 < T.int64(1000))
                    T.reads(A[v_ax0, v_k])
                    T.writes(B_shared[v_ax0])
                    with T.init():
                        B_shared[v_ax0] = T.float16(0.0)
                    B_shared[v_ax0] = B_shared[v_ax0] + T.Cast("float16", T.sigmoid(T.Cast("float32", A[v_ax0, v_k])))
        with T.block("B_shared"):
            v0 = T.axis.remap("S", [ax0_fused])
            T.reads(B_shared[v0])
            T.writes(B[v0])
            B[v0] = B_shared[v0]
