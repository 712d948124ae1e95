# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(inputs: T.Buffer((1, 16, 16, 4, 4, 8), "float32"), weight: T.Buffer((3, 3, 4, 4, 8, 16), "float32"), conv2d_capsule_nhwijc: T.Buffer((1, 8, 8, 4, 4, 16), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    PadInput = T.sblock_alloc_buffer((1, 18, 18, 4, 4, 8))
    for i0, i1, i2, i3, i4, i5 in T.grid(1, 18, 18, 4, 4, 8):
        with T.sblock("PadInput"):
            v_i0, v_i1, v_i2, v_i3, v_i4, v_i5 = T.axis.remap("SSSSSS", [i0, i1, i2, i3, i4, i5])
            T.reads(inputs[v_i0, v_i1 - 1, v_i2 - 1, v_i3, v_i4, v_i5])
            T.writes(PadInput[v_i0, v_i1, v_i2, v_i3, v_i4, v_i5])
            PadInput[v_i0, v_i1, v_i2, v_i3, v_i4, v_i5] = T.if_then_else(1 <= v_i1 and v_i1 < 17 and 1 <= v_i2 and v_i2 < 17, inputs[v_i0, v_i1 - 1, v_i2 - 1, v_i3, v_i4, v_i5], T.float32(0.0))
    for n, h, w, cap_i, cap_j, co, rh, rw, cap_k, rc in T.grid(1, 8, 8, 4, 4, 16, 3, 3, 4, 8):
        with T.sblock("conv2d_capsule_nhwijc"):
            v_n, v_h, v_w, v_cap_i, v_cap_j, v_co, v_rh, v_rw, v_cap_k, v_rc = T.axis.remap("SSSSSSRRRR", [n, h, w, cap_i, cap_j, co, rh, rw, cap_k, rc])
            T.reads(PadInput[v_n, v_h * 2 + v_rh, v_w * 2 + v_rw, v_cap_i, v_cap_k, v_rc], weight[v_rh, v_rw, v_cap_k, v_cap_j, v_rc, v_co])
            T.writes(conv2d_capsule_nhwijc[v_n, v_h, v_w, v_cap_i, v_cap_j, v_co])
            with T.init():
                conv2d_capsule_nhwijc[v_n, v_h, v_w, v_cap_i, v_cap_j, v_co] = T.float32(0.0)
            conv2d_capsule_nhwijc[v_n, v_h, v_w, v_cap_i, v_cap_j, v_co] = conv2d_capsule_nhwijc[v_n, v_h, v_w, v_cap_i, v_cap_j, v_co] + PadInput[v_n, v_h * 2 + v_rh, v_w * 2 + v_rw, v_cap_i, v_cap_k, v_rc] * weight[v_rh, v_rw, v_cap_k, v_cap_j, v_rc, v_co]
