# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(inputs: T.Buffer((1, 56, 56, 64), "float32"), weight: T.Buffer((1, 1, 16, 64), "float32"), conv2d_nhwc: T.Buffer((1, 56, 56, 64), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    PadInput = T.sblock_alloc_buffer((1, 56, 56, 64))
    for i0, i1, i2, i3 in T.grid(1, 56, 56, 64):
        with T.sblock("PadInput"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(inputs[v_i0, v_i1, v_i2, v_i3])
            T.writes(PadInput[v_i0, v_i1, v_i2, v_i3])
            PadInput[v_i0, v_i1, v_i2, v_i3] = inputs[v_i0, v_i1, v_i2, v_i3]
    for n, h, w, co, rh, rw, rc in T.grid(1, 56, 56, 64, 1, 1, 16):
        with T.sblock("conv2d_nhwc"):
            v_n, v_h, v_w, v_co, v_rh, v_rw, v_rc = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, rc])
            T.reads(PadInput[v_n, v_h + v_rh, v_w + v_rw, v_co // 16 * 16 + v_rc], weight[v_rh, v_rw, v_rc, v_co])
            T.writes(conv2d_nhwc[v_n, v_h, v_w, v_co])
            with T.init():
                conv2d_nhwc[v_n, v_h, v_w, v_co] = T.float32(0.0)
            conv2d_nhwc[v_n, v_h, v_w, v_co] = conv2d_nhwc[v_n, v_h, v_w, v_co] + PadInput[v_n, v_h + v_rh, v_w + v_rw, v_co // 16 * 16 + v_rc] * weight[v_rh, v_rw, v_rc, v_co]
