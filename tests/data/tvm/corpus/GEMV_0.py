# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(A: T.Buffer((1, 4096), "float32"), B: T.Buffer((4096, 4096), "float32"), NT_matmul: T.Buffer((1, 4096), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for i, j, k in T.grid(1, 4096, 4096):
        with T.sblock("NT_matmul"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i, v_k], B[v_j, v_k])
            T.writes(NT_matmul[v_i, v_j])
            with T.init():
                NT_matmul[v_i, v_j] = T.float32(0.0)
            NT_matmul[v_i, v_j] = NT_matmul[v_i, v_j] + A[v_i, v_k] * B[v_j, v_k]
