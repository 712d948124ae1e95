// The TVMScript dialect of apache-tvm 0.27 (`tirx`, T.sblock,
// T.sblock_alloc_buffer, T.sblock_attr, @T.prim_func(s_tir=True),
// @I.ir_module) reads as the same function as the 0.1x-0.2x spelling, and
// what is outside Kiln's subset is an error naming the construct and its
// line:col.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "ir/structural_equal.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/verify.h"

namespace kiln::ir {
namespace {

constexpr const char* kOld = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    acc = T.alloc_buffer((64,), scope="local")
    for i, k in T.grid(64, 64):
        with T.block("acc"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(A[v_i, v_k])
            T.writes(acc[v_i])
            T.block_attr({"meta_schedule.tiling_structure": "SSR"})
            with T.init():
                acc[v_i] = T.float32(0.0)
            acc[v_i] = acc[v_i] + T.exp(A[v_i, v_k])
    for i in T.parallel(64):
        with T.block("B"):
            v_i = T.axis.spatial(64, i)
            T.reads(acc[v_i])
            T.writes(B[v_i])
            B[v_i] = T.sqrt(T.max(acc[v_i], T.float32(1.0)))
)";

constexpr const char* kNew = R"(# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64,), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        acc = T.sblock_alloc_buffer((64,), scope="local")
        for i, k in T.grid(64, 64):
            with T.sblock("acc"):
                v_i, v_k = T.axis.remap("SR", [i, k])
                T.reads(A[v_i, v_k])
                T.writes(acc[v_i])
                T.sblock_attr({"meta_schedule.tiling_structure": "SSR"})
                with T.init():
                    acc[v_i] = T.float32(0.0)
                acc[v_i] = acc[v_i] + T.exp(A[v_i, v_k])
        for i in T.parallel(64):
            with T.sblock("B"):
                v_i = T.axis.spatial(64, i)
                T.reads(acc[v_i])
                T.writes(B[v_i])
                B[v_i] = T.sqrt(T.max(acc[v_i], T.float32(1.0)))
)";

TEST(TvmDialect, NewSpellingIsTheSameFunctionAsTheOld) {
  PrimFunc old_f = ParseFunc(kOld, "old.py");
  PrimFunc new_f = ParseFunc(kNew, "new.py");
  EXPECT_NO_THROW(Verify(new_f));
  EXPECT_TRUE(StructuralEqual(old_f, new_f));
  // Kiln prints the older spelling, so the canonical text is one.
  EXPECT_EQ(ToText(old_f), ToText(new_f));
  EXPECT_NE(ToText(new_f).find("\"tir.noalias\""), std::string::npos);
}

TEST(TvmDialect, HandleAndMatchBufferWithTupleShapes) {
  const char* text = R"(# from tvm.script import tirx as T

@T.prim_func(s_tir=True)
def main(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (16, 8), "float32")
    B = T.match_buffer(b, (16, 8), "int32")
    for i, j in T.grid(16, 8):
        with T.sblock("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j])
            T.writes(B[v_i, v_j])
            B[v_i, v_j] = T.Cast("int32", T.if_then_else(A[v_i, v_j] < T.float32(0.0), T.float32(0.0), A[v_i, v_j]))
)";
  PrimFunc f = ParseFunc(text);
  ASSERT_EQ(f.params.size(), 2u);
  EXPECT_EQ(f.params[1]->dtype, DataType::Int32());
  EXPECT_NO_THROW(Verify(f));
}

TEST(TvmDialect, ThreadBindingsSlicesAndScopes) {
  const char* text = R"(# from tvm.script import tirx as T

@T.prim_func(s_tir=True)
def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
    T.func_attr({"tirx.noalias": True})
    A_shared = T.sblock_alloc_buffer((128, 128), scope="shared")
    for bx in T.thread_binding(128, thread="blockIdx.x"):
        for ax in range(128):
            with T.sblock("A_shared"):
                v0 = T.axis.spatial(128, bx)
                v1 = T.axis.spatial(128, ax)
                T.reads(A[v0, v1])
                T.writes(A_shared[v0, v1])
                A_shared[v0, v1] = A[v0, v1]
        for k_0 in range(16):
            for k_1 in T.unroll(8):
                with T.sblock("B"):
                    v_i = T.axis.spatial(128, bx)
                    v_k = T.axis.reduce(128, k_0 * 8 + k_1)
                    T.reads(A_shared[v_i, 0:128])
                    T.writes(B[v_i])
                    with T.init():
                        B[v_i] = T.float32(0.0)
                    B[v_i] = B[v_i] + A_shared[v_i, v_k]
)";
  PrimFunc f = ParseFunc(text);
  EXPECT_NO_THROW(Verify(f));
  EXPECT_EQ(f.root_block().alloc_buffers.at(0)->scope, "shared");
}

// Each construct outside Kiln's subset: the parser's error names it and
// points at it.
struct Unsupported {
  const char* construct;
  const char* line;    // the offending line, placed in a function body
  const char* expect;  // in the message
  int line_no, col;    // where the message points (line 5 is the body's first)
};

std::string Wrap(const char* body_line) {
  return std::string(
             "# from tvm.script import tirx as T\n\n@T.prim_func(s_tir=True)\n"
             "def main(A: T.Buffer((8,), \"float32\")):\n    ") +
         body_line + "\n";
}

TEST(TvmDialect, UnsupportedConstructsAreNamedWithLineAndColumn) {
  const Unsupported cases[] = {
      {"T.allocate", "x = T.allocate([8], \"float32\", \"global\")", "T.allocate", 5, 9},
      {"T.decl_buffer", "x = T.decl_buffer((8,), \"float32\")", "T.decl_buffer", 5, 9},
      {"T.launch_thread", "with T.launch_thread(\"threadIdx.x\", 8):", "with T.launch_thread()", 5,
       10},
      {"while loop", "while A[0] < T.float32(1.0):", "unsupported 'while' loop", 5, 5},
      {"T.serial with step", "for i in T.serial(0, 8, step=2):", "'step'", 5, 34},
      {"T.Let", "x: T.float32 = A[0]", "unsupported annotated assignment 'x: ...'", 5, 5},
      {"T.assert", "T.Assert(A[0] > T.float32(0.0), \"positive\")", "T.Assert", 5, 5},
      {"unknown intrinsic", "T.evaluate(T.tvm_access_ptr(0))", "T.tvm_access_ptr", 5, 16},
      {"T.sblock_attr outside a block", "T.sblock_attr({\"a\": 1})", "T.block_attr", 5, 5},
      {"elif",
       "if A[0] < T.float32(0.0):\n        T.evaluate(0)\n    elif A[0] > T.float32(1.0):\n"
       "        T.evaluate(0)",
       "'elif'", 7, 5},
  };
  for (const Unsupported& c : cases) {
    SCOPED_TRACE(c.construct);
    try {
      ParseFunc(Wrap(c.line), "f.py");
      ADD_FAILURE() << "parsed";
    } catch (const ParseError& e) {
      std::string msg = e.what();
      std::cout << c.construct << " -> " << msg << "\n";
      std::string where = "f.py:" + std::to_string(c.line_no) + ":" + std::to_string(c.col) + ":";
      EXPECT_EQ(msg.rfind(where, 0), 0u) << msg;
      EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
    }
  }
}

TEST(TvmDialect, ModuleErrorsNameWhatIsNotAPrimFunc) {
  const char* relax = R"(# from tvm.script import ir as I
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((8,), "float32")):
        return x
)";
  try {
    ParseFunc(relax, "m.py");
    ADD_FAILURE() << "parsed";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("m.py:4:6:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("@R.function"), std::string::npos) << e.what();
  }
  const char* two = R"(@I.ir_module
class Module:
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        T.evaluate(0)
    @T.prim_func
    def main(A: T.Buffer((8,), "float32")):
        T.evaluate(0)
)";
  EXPECT_EQ(ParseFuncs(two).size(), 2u);
  EXPECT_THROW(ParseFunc(two), ParseError);  // one main expected
}

}  // namespace
}  // namespace kiln::ir
