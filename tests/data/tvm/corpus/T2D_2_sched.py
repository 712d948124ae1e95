# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(inputs: T.Buffer((1, 16, 16, 128), "float32"), weight: T.Buffer((4, 4, 128, 64), "float32"), conv2d_transpose_nhwc: T.Buffer((1, 32, 32, 64), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for n in range(1):
        for h_0 in T.parallel(4):
            for h_1, w, co, rh, rw in T.grid(8, 32, 64, 4, 4):
                for rc in T.unroll(128):
                    with T.sblock("conv2d_transpose_nhwc"):
                        v_n = T.axis.spatial(1, n)
                        v_h = T.axis.spatial(32, h_0 * 8 + h_1)
                        v_w, v_co, v_rh, v_rw, v_rc = T.axis.remap("SSRRR", [w, co, rh, rw, rc])
                        T.reads(inputs[v_n, (v_h + v_rh) // 2 - 1, (v_w + v_rw) // 2 - 1, v_rc], weight[3 - v_rh, 3 - v_rw, v_rc, v_co])
                        T.writes(conv2d_transpose_nhwc[v_n, v_h, v_w, v_co])
                        with T.init():
                            conv2d_transpose_nhwc[v_n, v_h, v_w, v_co] = T.float32(0.0)
                        conv2d_transpose_nhwc[v_n, v_h, v_w, v_co] = conv2d_transpose_nhwc[v_n, v_h, v_w, v_co] + T.if_then_else((v_h + v_rh) % 2 == 0 and (v_w + v_rw) % 2 == 0, T.if_then_else(1 <= (v_h + v_rh) // 2 and (v_h + v_rh) // 2 < 17 and 1 <= (v_w + v_rw) // 2 and (v_w + v_rw) // 2 < 17, inputs[v_n, (v_h + v_rh) // 2 - 1, (v_w + v_rw) // 2 - 1, v_rc], T.float32(0.0)), T.float32(0.0)) * weight[3 - v_rh, 3 - v_rw, v_rc, v_co]
