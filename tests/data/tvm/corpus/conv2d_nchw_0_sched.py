# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(X: T.Buffer((1, 64, 56, 56), "float32"), W: T.Buffer((64, 64, 3, 3), "float32"), conv2d_nchw: T.Buffer((1, 64, 56, 56), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for nn in range(1):
        for ff_0 in T.parallel(8):
            for ff_1, yy, xx, rc, ry in T.grid(8, 56, 56, 64, 3):
                for rx in T.unroll(3):
                    with T.sblock("conv2d_nchw"):
                        v_nn = T.axis.spatial(1, nn)
                        v_ff = T.axis.spatial(64, ff_0 * 8 + ff_1)
                        v_yy, v_xx, v_rc, v_ry, v_rx = T.axis.remap("SSRRR", [yy, xx, rc, ry, rx])
                        T.reads(X[v_nn, v_rc, v_yy + v_ry - 1, v_xx + v_rx - 1], W[v_ff, v_rc, v_ry, v_rx])
                        T.writes(conv2d_nchw[v_nn, v_ff, v_yy, v_xx])
                        with T.init():
                            conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = T.float32(0.0)
                        conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = conv2d_nchw[v_nn, v_ff, v_yy, v_xx] + T.if_then_else(1 <= v_yy + v_ry and v_yy + v_ry < 57 and 1 <= v_xx + v_rx and v_xx + v_rx < 57, X[v_nn, v_rc, v_yy + v_ry - 1, v_xx + v_rx - 1], T.float32(0.0)) * W[v_ff, v_rc, v_ry, v_rx]
