# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(inputs: T.Buffer((1, 16, 7, 7, 512), "float32"), weight: T.Buffer((3, 3, 3, 512, 512), "float32"), conv3d_ndhwc: T.Buffer((1, 16, 7, 7, 512), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for n in range(1):
        for d_0 in T.parallel(2):
            for d_1, h, w, co, rd, rh, rw in T.grid(8, 7, 7, 512, 3, 3, 3):
                for rc in T.unroll(512):
                    with T.sblock("conv3d_ndhwc"):
                        v_n = T.axis.spatial(1, n)
                        v_d = T.axis.spatial(16, d_0 * 8 + d_1)
                        v_h, v_w, v_co, v_rd, v_rh, v_rw, v_rc = T.axis.remap("SSSRRRR", [h, w, co, rd, rh, rw, rc])
                        T.reads(inputs[v_n, v_d + v_rd - 1, v_h + v_rh - 1, v_w + v_rw - 1, v_co // 512 * 512 + v_rc], weight[v_rd, v_rh, v_rw, v_rc, v_co])
                        T.writes(conv3d_ndhwc[v_n, v_d, v_h, v_w, v_co])
                        with T.init():
                            conv3d_ndhwc[v_n, v_d, v_h, v_w, v_co] = T.float32(0.0)
                        conv3d_ndhwc[v_n, v_d, v_h, v_w, v_co] = conv3d_ndhwc[v_n, v_d, v_h, v_w, v_co] + T.if_then_else(1 <= v_d + v_rd and v_d + v_rd < 17 and 1 <= v_h + v_rh and v_h + v_rh < 8 and 1 <= v_w + v_rw and v_w + v_rw < 8, inputs[v_n, v_d + v_rd - 1, v_h + v_rh - 1, v_w + v_rw - 1, v_co // 512 * 512 + v_rc], T.float32(0.0)) * weight[v_rd, v_rh, v_rw, v_rc, v_co]
