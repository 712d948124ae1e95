# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(inputs: T.Buffer((1, 7, 7, 512), "float32"), weight: T.Buffer((3, 3, 512, 512), "float32"), conv2d_nhwc: T.Buffer((1, 5, 5, 512), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for n in range(1):
        for h in T.parallel(5):
            for w, co, rh, rw in T.grid(5, 512, 3, 3):
                for rc in T.unroll(512):
                    with T.sblock("conv2d_nhwc"):
                        v_n, v_h, v_w, v_co, v_rh, v_rw, v_rc = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, rc])
                        T.reads(inputs[v_n, v_rh * 2 + v_h - 1, v_rw * 2 + v_w - 1, v_co // 512 * 512 + v_rc], weight[v_rh, v_rw, v_rc, v_co])
                        T.writes(conv2d_nhwc[v_n, v_h, v_w, v_co])
                        with T.init():
                            conv2d_nhwc[v_n, v_h, v_w, v_co] = T.float32(0.0)
                        conv2d_nhwc[v_n, v_h, v_w, v_co] = conv2d_nhwc[v_n, v_h, v_w, v_co] + T.if_then_else(1 <= v_rh * 2 + v_h and v_rh * 2 + v_h < 8 and 1 <= v_rw * 2 + v_w and v_rw * 2 + v_w < 8, inputs[v_n, v_rh * 2 + v_h - 1, v_rw * 2 + v_w - 1, v_co // 512 * 512 + v_rc], T.float32(0.0)) * weight[v_rh, v_rw, v_rc, v_co]
