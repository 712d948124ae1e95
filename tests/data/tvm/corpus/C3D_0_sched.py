# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(inputs: T.Buffer((1, 16, 224, 224, 3), "float32"), weight: T.Buffer((7, 7, 7, 3, 64), "float32"), conv3d_ndhwc: T.Buffer((1, 8, 112, 112, 64), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for n in range(1):
        for d_0 in T.parallel(2):
            for d_1, h, w, co, rd, rh, rw in T.grid(4, 112, 112, 64, 7, 7, 7):
                for rc in T.unroll(3):
                    with T.sblock("conv3d_ndhwc"):
                        v_n = T.axis.spatial(1, n)
                        v_d = T.axis.spatial(8, d_0 * 4 + d_1)
                        v_h, v_w, v_co, v_rd, v_rh, v_rw, v_rc = T.axis.remap("SSSRRRR", [h, w, co, rd, rh, rw, rc])
                        T.reads(inputs[v_n, v_d * 2 + v_rd - 3, v_h * 2 + v_rh - 3, v_w * 2 + v_rw - 3, v_co // 64 * 3 + v_rc], weight[v_rd, v_rh, v_rw, v_rc, v_co])
                        T.writes(conv3d_ndhwc[v_n, v_d, v_h, v_w, v_co])
                        with T.init():
                            conv3d_ndhwc[v_n, v_d, v_h, v_w, v_co] = T.float32(0.0)
                        conv3d_ndhwc[v_n, v_d, v_h, v_w, v_co] = conv3d_ndhwc[v_n, v_d, v_h, v_w, v_co] + T.if_then_else(3 <= v_d * 2 + v_rd and v_d * 2 + v_rd < 19 and 3 <= v_h * 2 + v_rh and v_h * 2 + v_rh < 227 and 3 <= v_w * 2 + v_rw and v_w * 2 + v_rw < 227, inputs[v_n, v_d * 2 + v_rd - 3, v_h * 2 + v_rh - 3, v_w * 2 + v_rw - 3, v_co // 64 * 3 + v_rc], T.float32(0.0)) * weight[v_rd, v_rh, v_rw, v_rc, v_co]
