// Programs shared by the cache_read and cache_write tests.
#pragma once

namespace kiln::ir::testing {

// A producer and its consumer under one shared outer loop.
inline constexpr const char* kSharedLoop = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    B = T.alloc_buffer((4, 8))
    for i in range(4):
        for j in range(8):
            with T.block("B"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                T.reads(A[v_i, v_j])
                T.writes(B[v_i, v_j])
                B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
        for j in range(8):
            with T.block("C"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                T.reads(B[v_i, v_j])
                T.writes(C[v_i, v_j])
                C[v_i, v_j] = B[v_i, v_j] + T.float32(1.0)
)";

}  // namespace kiln::ir::testing
