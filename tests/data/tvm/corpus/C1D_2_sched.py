# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(inputs: T.Buffer((1, 64, 256), "float32"), weight: T.Buffer((5, 256, 256), "float32"), conv1d_nlc: T.Buffer((1, 64, 256), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for n in range(1):
        for l_0 in T.parallel(8):
            for l_1, co, rl in T.grid(8, 256, 5):
                for rc in T.unroll(256):
                    with T.sblock("conv1d_nlc"):
                        v_n = T.axis.spatial(1, n)
                        v_l = T.axis.spatial(64, l_0 * 8 + l_1)
                        v_co, v_rl, v_rc = T.axis.remap("SRR", [co, rl, rc])
                        T.reads(inputs[v_n, v_l + v_rl - 2, v_co // 256 * 256 + v_rc], weight[v_rl, v_rc, v_co])
                        T.writes(conv1d_nlc[v_n, v_l, v_co])
                        with T.init():
                            conv1d_nlc[v_n, v_l, v_co] = T.float32(0.0)
                        conv1d_nlc[v_n, v_l, v_co] = conv1d_nlc[v_n, v_l, v_co] + T.if_then_else(2 <= v_l + v_rl and v_l + v_rl < 66, inputs[v_n, v_l + v_rl - 2, v_co // 256 * 256 + v_rc], T.float32(0.0)) * weight[v_rl, v_rc, v_co]
