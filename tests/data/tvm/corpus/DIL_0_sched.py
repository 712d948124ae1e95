# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(inputs: T.Buffer((1, 224, 224, 3), "float32"), weight: T.Buffer((7, 7, 3, 64), "float32"), conv2d_nhwc: T.Buffer((1, 109, 109, 64), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for n in range(1):
        for h in T.parallel(109):
            for w, co, rh, rw in T.grid(109, 64, 7, 7):
                for rc in T.unroll(3):
                    with T.sblock("conv2d_nhwc"):
                        v_n, v_h, v_w, v_co, v_rh, v_rw, v_rc = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, rc])
                        T.reads(inputs[v_n, v_h * 2 + v_rh * 2 - 3, v_w * 2 + v_rw * 2 - 3, v_co // 64 * 3 + v_rc], weight[v_rh, v_rw, v_rc, v_co])
                        T.writes(conv2d_nhwc[v_n, v_h, v_w, v_co])
                        with T.init():
                            conv2d_nhwc[v_n, v_h, v_w, v_co] = T.float32(0.0)
                        conv2d_nhwc[v_n, v_h, v_w, v_co] = conv2d_nhwc[v_n, v_h, v_w, v_co] + T.if_then_else(3 <= v_h * 2 + v_rh * 2 and v_h * 2 + v_rh * 2 < 227 and 3 <= v_w * 2 + v_rw * 2 and v_w * 2 + v_rw * 2 < 227, inputs[v_n, v_h * 2 + v_rh * 2 - 3, v_w * 2 + v_rw * 2 - 3, v_co // 64 * 3 + v_rc], T.float32(0.0)) * weight[v_rh, v_rw, v_rc, v_co]
