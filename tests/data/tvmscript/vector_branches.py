# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), M: T.Buffer((64,), "bool"), I: T.Buffer((64,), "int64")):
    T.func_attr({"tir.noalias": T.bool(True)})
    with T.block("root"):
        T.reads()
        T.writes()
        T.block_attr({"pragma": "x", "scale": T.float64(1e-05)})
        A_local = T.alloc_buffer((64,), scope="local")
        for i in T.serial(16, annotations={"software_pipeline_stage": 0}):
            with T.block("vec"):
                v = T.axis.opaque(16, i)
                T.reads(A[v * 4:v * 4 + 4])
                T.writes(A_local[v * 4:v * 4 + 4])
                A_local[T.Ramp(v * 4, 1, 4)] = A[T.Ramp(v * 4, 1, 4)] * T.Broadcast(T.float32(0.5), 4)
        for i in range(64):
            if M[i] or not i % 2 == 0:
                B[i] = T.Select(A_local[i] < T.float32(0.0), T.float32(0.0) - A_local[i], T.sqrt(A_local[i]))
            else:
                if T.isnan(A[i]):
                    B[i] = T.float32("nan")
                else:
                    B[i] = T.Cast("float32", I[i] // T.int64(3) - T.truncdiv(I[i], T.int64(-2)))
                    T.evaluate(0)
