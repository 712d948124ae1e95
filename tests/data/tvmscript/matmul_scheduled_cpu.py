# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"), C: T.Buffer((1024, 1024), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    C_local = T.alloc_buffer((1024, 1024), scope="local")
    for i_0 in T.parallel(32, annotations={"pragma_auto_unroll_max_step": 64, "pragma_unroll_explicit": 1}):
        for j_0, i_1, k_0 in T.grid(32, 32, 256):
            for k_1 in T.unroll(4):
                for j_1 in T.vectorized(32):
                    with T.block("C"):
                        v_i = T.axis.spatial(1024, i_0 * 32 + i_1)
                        v_j = T.axis.spatial(1024, j_0 * 32 + j_1)
                        v_k = T.axis.reduce(1024, k_0 * 4 + k_1)
                        T.reads(A[v_i, v_k], B[v_k, v_j])
                        T.writes(C_local[v_i, v_j])
                        T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
                        with T.init():
                            C_local[v_i, v_j] = T.float32(0.0)
                        C_local[v_i, v_j] = C_local[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
            for ax0 in T.vectorized(32):
                with T.block("C_local"):
                    v0 = T.axis.spatial(1024, i_0 * 32 + i_1)
                    v1 = T.axis.spatial(1024, j_0 * 32 + ax0)
                    T.reads(C_local[v0, v1])
                    T.writes(C[v0, v1])
                    C[v0, v1] = C_local[v0, v1]
