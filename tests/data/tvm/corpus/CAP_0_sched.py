# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(inputs: T.Buffer((1, 16, 16, 4, 4, 32), "float32"), weight: T.Buffer((3, 3, 4, 4, 32, 32), "float32"), conv2d_capsule_nhwijc: T.Buffer((1, 8, 8, 4, 4, 32), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for n in range(1):
        for h_0 in T.parallel(2):
            for h_1, w, cap_i, cap_j, co, rh, rw, cap_k in T.grid(4, 8, 4, 4, 32, 3, 3, 4):
                for rc in T.unroll(32):
                    with T.sblock("conv2d_capsule_nhwijc"):
                        v_n = T.axis.spatial(1, n)
                        v_h = T.axis.spatial(8, h_0 * 4 + h_1)
                        v_w, v_cap_i, v_cap_j, v_co, v_rh, v_rw, v_cap_k, v_rc = T.axis.remap("SSSSRRRR", [w, cap_i, cap_j, co, rh, rw, cap_k, rc])
                        T.reads(inputs[v_n, v_h * 2 + v_rh - 1, v_w * 2 + v_rw - 1, v_cap_i, v_cap_k, v_rc], weight[v_rh, v_rw, v_cap_k, v_cap_j, v_rc, v_co])
                        T.writes(conv2d_capsule_nhwijc[v_n, v_h, v_w, v_cap_i, v_cap_j, v_co])
                        with T.init():
                            conv2d_capsule_nhwijc[v_n, v_h, v_w, v_cap_i, v_cap_j, v_co] = T.float32(0.0)
                        conv2d_capsule_nhwijc[v_n, v_h, v_w, v_cap_i, v_cap_j, v_co] = conv2d_capsule_nhwijc[v_n, v_h, v_w, v_cap_i, v_cap_j, v_co] + T.if_then_else(1 <= v_h * 2 + v_rh and v_h * 2 + v_rh < 17 and 1 <= v_w * 2 + v_rw and v_w * 2 + v_rw < 17, inputs[v_n, v_h * 2 + v_rh - 1, v_w * 2 + v_rw - 1, v_cap_i, v_cap_k, v_rc], T.float32(0.0)) * weight[v_rh, v_rw, v_cap_k, v_cap_j, v_rc, v_co]
