# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(data: T.Buffer((1, 224, 224, 3), "float32"), kernel: T.Buffer((7, 7, 3, 64), "float32"), bias: T.Buffer((64,), "float32"), bn_offset: T.Buffer((64,), "float32"), bn_scale: T.Buffer((64,), "float32"), compute: T.Buffer((1, 112, 112, 64), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    PaddedInput = T.sblock_alloc_buffer((1, 230, 230, 3))
    Conv2dOutput = T.sblock_alloc_buffer((1, 112, 112, 64))
    bias_add = T.sblock_alloc_buffer((1, 112, 112, 64))
    bn_mul = T.sblock_alloc_buffer((1, 112, 112, 64))
    bn_add = T.sblock_alloc_buffer((1, 112, 112, 64))
    for i0, i1, i2, i3 in T.grid(1, 230, 230, 3):
        with T.sblock("PaddedInput"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(data[v_i0, v_i1 - 3, v_i2 - 3, v_i3])
            T.writes(PaddedInput[v_i0, v_i1, v_i2, v_i3])
            PaddedInput[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(3 <= v_i1 and v_i1 < 227 and 3 <= v_i2 and v_i2 < 227, data[v_i0, v_i1 - 3, v_i2 - 3, v_i3], T.float32(0.0))
    for nn, yy, xx, ff, ry, rx, rc in T.grid(1, 112, 112, 64, 7, 7, 3):
        with T.sblock("Conv2dOutput"):
            v_nn, v_yy, v_xx, v_ff, v_ry, v_rx, v_rc = T.axis.remap("SSSSRRR", [nn, yy, xx, ff, ry, rx, rc])
            T.reads(PaddedInput[v_nn, v_yy * 2 + v_ry, v_xx * 2 + v_rx, v_rc], kernel[v_ry, v_rx, v_rc, v_ff])
            T.writes(Conv2dOutput[v_nn, v_yy, v_xx, v_ff])
            with T.init():
                Conv2dOutput[v_nn, v_yy, v_xx, v_ff] = T.float32(0.0)
            Conv2dOutput[v_nn, v_yy, v_xx, v_ff] = Conv2dOutput[v_nn, v_yy, v_xx, v_ff] + PaddedInput[v_nn, v_yy * 2 + v_ry, v_xx * 2 + v_rx, v_rc] * kernel[v_ry, v_rx, v_rc, v_ff]
    for i, j, k, l in T.grid(1, 112, 112, 64):
        with T.sblock("bias_add"):
            v_i, v_j, v_k, v_l = T.axis.remap("SSSS", [i, j, k, l])
            T.reads(Conv2dOutput[v_i, v_j, v_k, v_l], bias[v_l])
            T.writes(bias_add[v_i, v_j, v_k, v_l])
            bias_add[v_i, v_j, v_k, v_l] = Conv2dOutput[v_i, v_j, v_k, v_l] + bias[v_l]
    for i, j, k, l in T.grid(1, 112, 112, 64):
        with T.sblock("bn_mul"):
            v_i, v_j, v_k, v_l = T.axis.remap("SSSS", [i, j, k, l])
            T.reads(bias_add[v_i, v_j, v_k, v_l], bn_scale[v_l])
            T.writes(bn_mul[v_i, v_j, v_k, v_l])
            bn_mul[v_i, v_j, v_k, v_l] = bias_add[v_i, v_j, v_k, v_l] * bn_scale[v_l]
    for i, j, k, l in T.grid(1, 112, 112, 64):
        with T.sblock("bn_add"):
            v_i, v_j, v_k, v_l = T.axis.remap("SSSS", [i, j, k, l])
            T.reads(bn_mul[v_i, v_j, v_k, v_l], bn_offset[v_l])
            T.writes(bn_add[v_i, v_j, v_k, v_l])
            bn_add[v_i, v_j, v_k, v_l] = bn_mul[v_i, v_j, v_k, v_l] + bn_offset[v_l]
    for i0, i1, i2, i3 in T.grid(1, 112, 112, 64):
        with T.sblock("compute"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(bn_add[v_i0, v_i1, v_i2, v_i3])
            T.writes(compute[v_i0, v_i1, v_i2, v_i3])
            compute[v_i0, v_i1, v_i2, v_i3] = T.max(bn_add[v_i0, v_i1, v_i2, v_i3], T.float32(0.0))
