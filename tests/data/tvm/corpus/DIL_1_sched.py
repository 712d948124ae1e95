# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(inputs: T.Buffer((1, 56, 56, 64), "float32"), weight: T.Buffer((1, 1, 64, 64), "float32"), conv2d_nhwc: T.Buffer((1, 56, 56, 64), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for n in range(1):
        for h_0 in T.parallel(7):
            for h_1, w, co, rh, rw in T.grid(8, 56, 64, 1, 1):
                for rc in T.unroll(64):
                    with T.sblock("conv2d_nhwc"):
                        v_n = T.axis.spatial(1, n)
                        v_h = T.axis.spatial(56, h_0 * 8 + h_1)
                        v_w, v_co, v_rh, v_rw, v_rc = T.axis.remap("SSRRR", [w, co, rh, rw, rc])
                        T.reads(inputs[v_n, v_rh * 2 + v_h, v_rw * 2 + v_w, v_co // 64 * 64 + v_rc], weight[v_rh, v_rw, v_rc, v_co])
                        T.writes(conv2d_nhwc[v_n, v_h, v_w, v_co])
                        with T.init():
                            conv2d_nhwc[v_n, v_h, v_w, v_co] = T.float32(0.0)
                        conv2d_nhwc[v_n, v_h, v_w, v_co] = conv2d_nhwc[v_n, v_h, v_w, v_co] + inputs[v_n, v_rh * 2 + v_h, v_rw * 2 + v_w, v_co // 64 * 64 + v_rc] * weight[v_rh, v_rw, v_rc, v_co]
