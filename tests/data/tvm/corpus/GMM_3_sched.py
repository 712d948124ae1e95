# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(X: T.Buffer((1, 1024, 1024), "float32"), Y: T.Buffer((1, 1024, 1024), "float32"), Z: T.Buffer((1, 1024, 1024), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for b in range(1):
        for i_0 in T.parallel(128):
            for i_1, j in T.grid(8, 1024):
                for k in T.unroll(1024):
                    with T.sblock("Z"):
                        v_b = T.axis.spatial(1, b)
                        v_i = T.axis.spatial(1024, i_0 * 8 + i_1)
                        v_j, v_k = T.axis.remap("SR", [j, k])
                        T.reads(X[v_b, v_i, v_k], Y[v_b, v_k, v_j])
                        T.writes(Z[v_b, v_i, v_j])
                        with T.init():
                            Z[v_b, v_i, v_j] = T.float32(0.0)
                        Z[v_b, v_i, v_j] = Z[v_b, v_i, v_j] + X[v_b, v_i, v_k] * Y[v_b, v_k, v_j]
