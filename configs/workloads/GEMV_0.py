# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((1, 4096), "float32"), B: T.Buffer((4096, 4096), "float32"), NT_matmul: T.Buffer((1, 4096), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i0, i1, k in T.grid(1, 4096, 4096):
        with T.block("NT_matmul"):
            v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
            T.reads(A[v_i0, v_k], B[v_i1, v_k])
            T.writes(NT_matmul[v_i0, v_i1])
            with T.init():
                NT_matmul[v_i0, v_i1] = T.float32(0.0)
            NT_matmul[v_i0, v_i1] = NT_matmul[v_i0, v_i1] + A[v_i0, v_k] * B[v_i1, v_k]
