# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(data: T.Buffer((1, 28, 28, 128), "float32"), kernel: T.Buffer((1, 1, 128, 256), "float32"), bias: T.Buffer((256,), "float32"), bn_offset: T.Buffer((256,), "float32"), bn_scale: T.Buffer((256,), "float32"), compute: T.Buffer((1, 14, 14, 256), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    PaddedInput = T.sblock_alloc_buffer((1, 28, 28, 128))
    Conv2dOutput = T.sblock_alloc_buffer((1, 14, 14, 256))
    bias_add = T.sblock_alloc_buffer((1, 14, 14, 256))
    bn_mul = T.sblock_alloc_buffer((1, 14, 14, 256))
    bn_add = T.sblock_alloc_buffer((1, 14, 14, 256))
    for i0 in range(1):
        for i1_0 in T.parallel(7):
            for i1_1, i2, i3_0 in T.grid(4, 28, 32):
                for i3_1 in T.vectorized(4):
                    with T.sblock("PaddedInput"):
                        v_i0 = T.axis.spatial(1, i0)
                        v_i1 = T.axis.spatial(28, i1_0 * 4 + i1_1)
                        v_i2 = T.axis.spatial(28, i2)
                        v_i3 = T.axis.spatial(128, i3_0 * 4 + i3_1)
                        T.reads(data[v_i0, v_i1, v_i2, v_i3])
                        T.writes(PaddedInput[v_i0, v_i1, v_i2, v_i3])
                        PaddedInput[v_i0, v_i1, v_i2, v_i3] = data[v_i0, v_i1, v_i2, v_i3]
    for nn in range(1):
        for yy_0 in T.parallel(7):
            for yy_1, xx, ff, ry, rx in T.grid(2, 14, 256, 1, 1):
                for rc in T.unroll(128):
                    with T.sblock("Conv2dOutput"):
                        v_nn = T.axis.spatial(1, nn)
                        v_yy = T.axis.spatial(14, yy_0 * 2 + yy_1)
                        v_xx, v_ff, v_ry, v_rx, v_rc = T.axis.remap("SSRRR", [xx, ff, ry, rx, rc])
                        T.reads(PaddedInput[v_nn, v_yy * 2 + v_ry, v_xx * 2 + v_rx, v_rc], kernel[v_ry, v_rx, v_rc, v_ff])
                        T.writes(Conv2dOutput[v_nn, v_yy, v_xx, v_ff])
                        with T.init():
                            Conv2dOutput[v_nn, v_yy, v_xx, v_ff] = T.float32(0.0)
                        Conv2dOutput[v_nn, v_yy, v_xx, v_ff] = Conv2dOutput[v_nn, v_yy, v_xx, v_ff] + PaddedInput[v_nn, v_yy * 2 + v_ry, v_xx * 2 + v_rx, v_rc] * kernel[v_ry, v_rx, v_rc, v_ff]
    for i in range(1):
        for j_0 in T.parallel(7):
            for j_1, k, l_0 in T.grid(2, 14, 64):
                for l_1 in T.vectorized(4):
                    with T.sblock("bias_add"):
                        v_i = T.axis.spatial(1, i)
                        v_j = T.axis.spatial(14, j_0 * 2 + j_1)
                        v_k = T.axis.spatial(14, k)
                        v_l = T.axis.spatial(256, l_0 * 4 + l_1)
                        T.reads(Conv2dOutput[v_i, v_j, v_k, v_l], bias[v_l])
                        T.writes(bias_add[v_i, v_j, v_k, v_l])
                        bias_add[v_i, v_j, v_k, v_l] = Conv2dOutput[v_i, v_j, v_k, v_l] + bias[v_l]
    for i in range(1):
        for j_0 in T.parallel(7):
            for j_1, k, l_0 in T.grid(2, 14, 64):
                for l_1 in T.vectorized(4):
                    with T.sblock("bn_mul"):
                        v_i = T.axis.spatial(1, i)
                        v_j = T.axis.spatial(14, j_0 * 2 + j_1)
                        v_k = T.axis.spatial(14, k)
                        v_l = T.axis.spatial(256, l_0 * 4 + l_1)
                        T.reads(bias_add[v_i, v_j, v_k, v_l], bn_scale[v_l])
                        T.writes(bn_mul[v_i, v_j, v_k, v_l])
                        bn_mul[v_i, v_j, v_k, v_l] = bias_add[v_i, v_j, v_k, v_l] * bn_scale[v_l]
    for i in range(1):
        for j_0 in T.parallel(7):
            for j_1, k, l_0 in T.grid(2, 14, 64):
                for l_1 in T.vectorized(4):
                    with T.sblock("bn_add"):
                        v_i = T.axis.spatial(1, i)
                        v_j = T.axis.spatial(14, j_0 * 2 + j_1)
                        v_k = T.axis.spatial(14, k)
                        v_l = T.axis.spatial(256, l_0 * 4 + l_1)
                        T.reads(bn_mul[v_i, v_j, v_k, v_l], bn_offset[v_l])
                        T.writes(bn_add[v_i, v_j, v_k, v_l])
                        bn_add[v_i, v_j, v_k, v_l] = bn_mul[v_i, v_j, v_k, v_l] + bn_offset[v_l]
    for i0 in range(1):
        for i1_0 in T.parallel(7):
            for i1_1, i2, i3_0 in T.grid(2, 14, 64):
                for i3_1 in T.vectorized(4):
                    with T.sblock("compute"):
                        v_i0 = T.axis.spatial(1, i0)
                        v_i1 = T.axis.spatial(14, i1_0 * 2 + i1_1)
                        v_i2 = T.axis.spatial(14, i2)
                        v_i3 = T.axis.spatial(256, i3_0 * 4 + i3_1)
                        T.reads(bn_add[v_i0, v_i1, v_i2, v_i3])
                        T.writes(compute[v_i0, v_i1, v_i2, v_i3])
                        compute[v_i0, v_i1, v_i2, v_i3] = T.max(bn_add[v_i0, v_i1, v_i2, v_i3], T.float32(0.0))
