# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(inputs: T.Buffer((1, 16, 56, 56, 64), "float32"), weight: T.Buffer((1, 1, 1, 64, 64), "float32"), conv3d_ndhwc: T.Buffer((1, 16, 56, 56, 64), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for n in range(1):
        for d_0 in T.parallel(2):
            for d_1, h, w, co, rd, rh, rw in T.grid(8, 56, 56, 64, 1, 1, 1):
                for rc in T.unroll(64):
                    with T.sblock("conv3d_ndhwc"):
                        v_n = T.axis.spatial(1, n)
                        v_d = T.axis.spatial(16, d_0 * 8 + d_1)
                        v_h, v_w, v_co, v_rd, v_rh, v_rw, v_rc = T.axis.remap("SSSRRRR", [h, w, co, rd, rh, rw, rc])
                        T.reads(inputs[v_n, v_d + v_rd, v_h + v_rh, v_w + v_rw, v_co // 64 * 64 + v_rc], weight[v_rd, v_rh, v_rw, v_rc, v_co])
                        T.writes(conv3d_ndhwc[v_n, v_d, v_h, v_w, v_co])
                        with T.init():
                            conv3d_ndhwc[v_n, v_d, v_h, v_w, v_co] = T.float32(0.0)
                        conv3d_ndhwc[v_n, v_d, v_h, v_w, v_co] = conv3d_ndhwc[v_n, v_d, v_h, v_w, v_co] + inputs[v_n, v_d + v_rd, v_h + v_rh, v_w + v_rw, v_co // 64 * 64 + v_rc] * weight[v_rd, v_rh, v_rw, v_rc, v_co]
