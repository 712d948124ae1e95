# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(inputs: T.Buffer((1, 64, 256), "float32"), weight: T.Buffer((5, 256, 256), "float32"), conv1d_nlc: T.Buffer((1, 64, 256), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    PadInput = T.sblock_alloc_buffer((1, 68, 256))
    for i0, i1, i2 in T.grid(1, 68, 256):
        with T.sblock("PadInput"):
            v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
            T.reads(inputs[v_i0, v_i1 - 2, v_i2])
            T.writes(PadInput[v_i0, v_i1, v_i2])
            PadInput[v_i0, v_i1, v_i2] = T.if_then_else(2 <= v_i1 and v_i1 < 66, inputs[v_i0, v_i1 - 2, v_i2], T.float32(0.0))
    for n, l, co, rl, rc in T.grid(1, 64, 256, 5, 256):
        with T.sblock("conv1d_nlc"):
            v_n, v_l, v_co, v_rl, v_rc = T.axis.remap("SSSRR", [n, l, co, rl, rc])
            T.reads(PadInput[v_n, v_l + v_rl, v_co // 256 * 256 + v_rc], weight[v_rl, v_rc, v_co])
            T.writes(conv1d_nlc[v_n, v_l, v_co])
            with T.init():
                conv1d_nlc[v_n, v_l, v_co] = T.float32(0.0)
            conv1d_nlc[v_n, v_l, v_co] = conv1d_nlc[v_n, v_l, v_co] + PadInput[v_n, v_l + v_rl, v_co // 256 * 256 + v_rc] * weight[v_rl, v_rc, v_co]
