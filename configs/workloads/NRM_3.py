# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((1, 4096, 1024), "float32"), D: T.Buffer((1,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    C = T.alloc_buffer((1,))
    for b, i, j in T.grid(1, 4096, 1024):
        with T.block("C"):
            v_b, v_i, v_j = T.axis.remap("SRR", [b, i, j])
            T.reads(A[v_b, v_i, v_j])
            T.writes(C[v_b])
            with T.init():
                C[v_b] = T.float32(0.0)
            C[v_b] = C[v_b] + A[v_b, v_i, v_j] * A[v_b, v_i, v_j]
    for b in range(1):
        with T.block("D"):
            v_b = T.axis.remap("S", [b])
            T.reads(C[v_b])
            T.writes(D[v_b])
            D[v_b] = T.sqrt(C[v_b])
