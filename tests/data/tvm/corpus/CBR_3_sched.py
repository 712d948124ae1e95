# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(data: T.Buffer((1, 7, 7, 512), "float32"), kernel: T.Buffer((3, 3, 512, 512), "float32"), bias: T.Buffer((512,), "float32"), bn_offset: T.Buffer((512,), "float32"), bn_scale: T.Buffer((512,), "float32"), compute: T.Buffer((1, 7, 7, 512), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    PaddedInput = T.sblock_alloc_buffer((1, 9, 9, 512))
    Conv2dOutput = T.sblock_alloc_buffer((1, 7, 7, 512))
    bias_add = T.sblock_alloc_buffer((1, 7, 7, 512))
    bn_mul = T.sblock_alloc_buffer((1, 7, 7, 512))
    bn_add = T.sblock_alloc_buffer((1, 7, 7, 512))
    for i0 in range(1):
        for i1 in T.parallel(9):
            for i2, i3_0 in T.grid(9, 128):
                for i3_1 in T.vectorized(4):
                    with T.sblock("PaddedInput"):
                        v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
                        v_i3 = T.axis.spatial(512, i3_0 * 4 + i3_1)
                        T.reads(data[v_i0, v_i1 - 1, v_i2 - 1, v_i3])
                        T.writes(PaddedInput[v_i0, v_i1, v_i2, v_i3])
                        PaddedInput[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i1 and v_i1 < 8 and 1 <= v_i2 and v_i2 < 8, data[v_i0, v_i1 - 1, v_i2 - 1, v_i3], T.float32(0.0))
    for nn in range(1):
        for yy in T.parallel(7):
            for xx, ff, ry, rx in T.grid(7, 512, 3, 3):
                for rc in T.unroll(512):
                    with T.sblock("Conv2dOutput"):
                        v_nn, v_yy, v_xx, v_ff, v_ry, v_rx, v_rc = T.axis.remap("SSSSRRR", [nn, yy, xx, ff, ry, rx, rc])
                        T.reads(PaddedInput[v_nn, v_yy + v_ry, v_xx + v_rx, v_rc], kernel[v_ry, v_rx, v_rc, v_ff])
                        T.writes(Conv2dOutput[v_nn, v_yy, v_xx, v_ff])
                        with T.init():
                            Conv2dOutput[v_nn, v_yy, v_xx, v_ff] = T.float32(0.0)
                        Conv2dOutput[v_nn, v_yy, v_xx, v_ff] = Conv2dOutput[v_nn, v_yy, v_xx, v_ff] + PaddedInput[v_nn, v_yy + v_ry, v_xx + v_rx, v_rc] * kernel[v_ry, v_rx, v_rc, v_ff]
    for i in range(1):
        for j in T.parallel(7):
            for k, l_0 in T.grid(7, 128):
                for l_1 in T.vectorized(4):
                    with T.sblock("bias_add"):
                        v_i, v_j, v_k = T.axis.remap("SSS", [i, j, k])
                        v_l = T.axis.spatial(512, l_0 * 4 + l_1)
                        T.reads(Conv2dOutput[v_i, v_j, v_k, v_l], bias[v_l])
                        T.writes(bias_add[v_i, v_j, v_k, v_l])
                        bias_add[v_i, v_j, v_k, v_l] = Conv2dOutput[v_i, v_j, v_k, v_l] + bias[v_l]
    for i in range(1):
        for j in T.parallel(7):
            for k, l_0 in T.grid(7, 128):
                for l_1 in T.vectorized(4):
                    with T.sblock("bn_mul"):
                        v_i, v_j, v_k = T.axis.remap("SSS", [i, j, k])
                        v_l = T.axis.spatial(512, l_0 * 4 + l_1)
                        T.reads(bias_add[v_i, v_j, v_k, v_l], bn_scale[v_l])
                        T.writes(bn_mul[v_i, v_j, v_k, v_l])
                        bn_mul[v_i, v_j, v_k, v_l] = bias_add[v_i, v_j, v_k, v_l] * bn_scale[v_l]
    for i in range(1):
        for j in T.parallel(7):
            for k, l_0 in T.grid(7, 128):
                for l_1 in T.vectorized(4):
                    with T.sblock("bn_add"):
                        v_i, v_j, v_k = T.axis.remap("SSS", [i, j, k])
                        v_l = T.axis.spatial(512, l_0 * 4 + l_1)
                        T.reads(bn_mul[v_i, v_j, v_k, v_l], bn_offset[v_l])
                        T.writes(bn_add[v_i, v_j, v_k, v_l])
                        bn_add[v_i, v_j, v_k, v_l] = bn_mul[v_i, v_j, v_k, v_l] + bn_offset[v_l]
    for i0 in range(1):
        for i1 in T.parallel(7):
            for i2, i3_0 in T.grid(7, 128):
                for i3_1 in T.vectorized(4):
                    with T.sblock("compute"):
                        v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
                        v_i3 = T.axis.spatial(512, i3_0 * 4 + i3_1)
                        T.reads(bn_add[v_i0, v_i1, v_i2, v_i3])
                        T.writes(compute[v_i0, v_i1, v_i2, v_i3])
                        compute[v_i0, v_i1, v_i2, v_i3] = T.max(bn_add[v_i0, v_i1, v_i2, v_i3], T.float32(0.0))
