# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(placeholder: T.Buffer((1, 112, 112, 64), "float32"), placeholder_1: T.Buffer((1, 3, 3, 64), "float32"), depth_conv2d_nhwc: T.Buffer((1, 56, 56, 64), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    PadInput = T.sblock_alloc_buffer((1, 114, 114, 64))
    for i0, i1, i2, i3 in T.grid(1, 114, 114, 64):
        with T.sblock("PadInput"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(placeholder[v_i0, v_i1 - 1, v_i2 - 1, v_i3])
            T.writes(PadInput[v_i0, v_i1, v_i2, v_i3])
            PadInput[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i1 and v_i1 < 113 and 1 <= v_i2 and v_i2 < 113, placeholder[v_i0, v_i1 - 1, v_i2 - 1, v_i3], T.float32(0.0))
    for n, h, w, c, rh, rw in T.grid(1, 56, 56, 64, 3, 3):
        with T.sblock("depth_conv2d_nhwc"):
            v_n, v_h, v_w, v_c, v_rh, v_rw = T.axis.remap("SSSSRR", [n, h, w, c, rh, rw])
            T.reads(PadInput[v_n, v_h * 2 + v_rh, v_w * 2 + v_rw, v_c], placeholder_1[0, v_rh, v_rw, v_c])
            T.writes(depth_conv2d_nhwc[v_n, v_h, v_w, v_c])
            with T.init():
                depth_conv2d_nhwc[v_n, v_h, v_w, v_c] = T.float32(0.0)
            depth_conv2d_nhwc[v_n, v_h, v_w, v_c] = depth_conv2d_nhwc[v_n, v_h, v_w, v_c] + PadInput[v_n, v_h * 2 + v_rh, v_w * 2 + v_rw, v_c] * placeholder_1[0, v_rh, v_rw, v_c]
