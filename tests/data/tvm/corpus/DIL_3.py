# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(inputs: T.Buffer((1, 7, 7, 512), "float32"), weight: T.Buffer((3, 3, 512, 512), "float32"), conv2d_nhwc: T.Buffer((1, 5, 5, 512), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    PadInput = T.sblock_alloc_buffer((1, 9, 9, 512))
    for i0, i1, i2, i3 in T.grid(1, 9, 9, 512):
        with T.sblock("PadInput"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(inputs[v_i0, v_i1 - 1, v_i2 - 1, v_i3])
            T.writes(PadInput[v_i0, v_i1, v_i2, v_i3])
            PadInput[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i1 and v_i1 < 8 and 1 <= v_i2 and v_i2 < 8, inputs[v_i0, v_i1 - 1, v_i2 - 1, v_i3], T.float32(0.0))
    for n, h, w, co, rh, rw, rc in T.grid(1, 5, 5, 512, 3, 3, 512):
        with T.sblock("conv2d_nhwc"):
            v_n, v_h, v_w, v_co, v_rh, v_rw, v_rc = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, rc])
            T.reads(PadInput[v_n, v_rh * 2 + v_h, v_rw * 2 + v_w, v_co // 512 * 512 + v_rc], weight[v_rh, v_rw, v_rc, v_co])
            T.writes(conv2d_nhwc[v_n, v_h, v_w, v_co])
            with T.init():
                conv2d_nhwc[v_n, v_h, v_w, v_co] = T.float32(0.0)
            conv2d_nhwc[v_n, v_h, v_w, v_co] = conv2d_nhwc[v_n, v_h, v_w, v_co] + PadInput[v_n, v_rh * 2 + v_h, v_rw * 2 + v_w, v_co // 512 * 512 + v_rc] * weight[v_rh, v_rw, v_rc, v_co]
