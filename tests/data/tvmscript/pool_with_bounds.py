# from tvm.script import tir as T

@T.prim_func
def main(X: T.Buffer((16, 130), "int8"), Y: T.Buffer((16, 128), "int32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i in range(16):
        for j in range(1, 129):
            with T.block("Y"):
                v_i = T.axis.spatial(16, i)
                v_j = T.axis.spatial((1, 129), j)
                T.reads(X[v_i, v_j - 1:v_j - 1 + 3])
                T.writes(Y[v_i, v_j - 1])
                Y[v_i, v_j - 1] = T.Cast("int32", T.max(T.max(X[v_i, v_j - 1], X[v_i, v_j]), X[v_i, v_j + 1])) // 2 - T.truncmod(v_j, 3) * -1
