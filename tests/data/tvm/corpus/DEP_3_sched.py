# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(placeholder: T.Buffer((1, 7, 7, 1024), "float32"), placeholder_1: T.Buffer((1, 3, 3, 1024), "float32"), depth_conv2d_nhwc: T.Buffer((1, 7, 7, 1024), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for n in range(1):
        for h in T.parallel(7):
            for w, c, rh in T.grid(7, 1024, 3):
                for rw in T.unroll(3):
                    with T.sblock("depth_conv2d_nhwc"):
                        v_n, v_h, v_w, v_c, v_rh, v_rw = T.axis.remap("SSSSRR", [n, h, w, c, rh, rw])
                        T.reads(placeholder[v_n, v_h + v_rh - 1, v_w + v_rw - 1, v_c], placeholder_1[0, v_rh, v_rw, v_c])
                        T.writes(depth_conv2d_nhwc[v_n, v_h, v_w, v_c])
                        with T.init():
                            depth_conv2d_nhwc[v_n, v_h, v_w, v_c] = T.float32(0.0)
                        depth_conv2d_nhwc[v_n, v_h, v_w, v_c] = depth_conv2d_nhwc[v_n, v_h, v_w, v_c] + T.if_then_else(1 <= v_h + v_rh and v_h + v_rh < 8 and 1 <= v_w + v_rw and v_w + v_rw < 8, placeholder[v_n, v_h + v_rh - 1, v_w + v_rw - 1, v_c], T.float32(0.0)) * placeholder_1[0, v_rh, v_rw, v_c]
