// Parser: the TVMScript variants it accepts, and its error messages with
// their exact locations.
#include "ir/text/parser.h"

#include <gtest/gtest.h>

#include "ir/op.h"
#include "ir/text/printer.h"

namespace kiln::ir {
namespace {

constexpr const char* kHeader = "# from tvm.script import tir as T\n\n@T.prim_func\n";

// Parses `text` expecting an error at line:col whose message contains `msg`.
void ExpectError(const std::string& text, int line, int col, const std::string& msg) {
  try {
    ParseFuncs(text, "t.py");
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const ParseError& e) {
    EXPECT_EQ(e.loc().line, line) << e.what();
    EXPECT_EQ(e.loc().col, col) << e.what();
    EXPECT_NE(e.message().find(msg), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(
                  "t.py:" + std::to_string(line) + ":" + std::to_string(col) + ": error: ", 0),
              0u)
        << e.what();
  }
}

// A function with one 2-D buffer parameter A and `body` (indented 4).
std::string Func(const std::string& body) {
  return std::string(kHeader) + "def main(A: T.Buffer((4, 4), \"float32\")):\n" + body;
}

TEST(ParserErrors, ExpectedCloseParen) {
  ExpectError(Func("    for i, j in T.grid(4, 4:\n        A[i, j] = T.float32(0.0)\n"), 5, 28,
              "expected ')', found ':'");
}

TEST(ParserErrors, UndefinedVariable) {
  ExpectError(Func("    for i in range(4):\n        A[i, x] = T.float32(0.0)\n"), 6, 14,
              "undefined variable 'x'");
}

TEST(ParserErrors, UnknownIntrinsic) {
  ExpectError(Func("    for i in range(4):\n        A[i, i] = T.foo(A[i, i])\n"), 6, 19,
              "unknown intrinsic T.foo");
}

TEST(ParserErrors, WrongNumberOfIndices) {
  ExpectError(Func("    for i in range(4):\n        A[i, i] = A[i, i, i]\n"), 6, 19,
              "buffer A has 2 dimensions but is indexed with 3");
}

TEST(ParserErrors, InconsistentIndentation) {
  ExpectError(Func("    for i in range(4):\n        A[i, i] = T.float32(0.0)\n      A[0, 0] = "
                   "T.float32(1.0)\n"),
              7, 7, "inconsistent indentation");
}

TEST(ParserErrors, ExpectedIndentedBlock) {
  ExpectError(Func("    for i in range(4):\n    A[i, i] = T.float32(0.0)\n"), 6, 5,
              "expected an indented block");
}

TEST(ParserErrors, UnknownDataType) {
  ExpectError(
      std::string(kHeader) + "def main(A: T.Buffer((4,), \"float33\")):\n    T.evaluate(0)\n", 4,
      28, "unknown data type \"float33\"");
}

TEST(ParserErrors, UnterminatedString) {
  ExpectError(Func("    with T.block(\"C):\n        T.evaluate(0)\n"), 5, 18,
              "unterminated string literal");
}

TEST(ParserErrors, UnexpectedCharacter) {
  ExpectError(Func("    T.evaluate($)\n"), 5, 16, "unexpected character '$'");
}

TEST(ParserErrors, IntegerOutOfRange) {
  ExpectError(Func("    T.evaluate(99999999999999999999)\n"), 5, 16, "out of range");
  ExpectError(Func("    T.evaluate(T.int64(9223372036854775808))\n"), 5, 24,
              "out of range for int64");
}

TEST(ParserErrors, TypeErrorFromConstructor) {
  // IRError from ir/op.h becomes a ParseError at the operator.
  ExpectError(Func("    T.evaluate(T.exp(1))\n"), 5, 16, "T.exp needs a float argument, got int32");
  ExpectError(Func("    T.evaluate(True and 1)\n"), 5, 21, "needs bool operands");
  ExpectError(Func("    T.evaluate(T.tvm_warp_shuffle_down(T.float32(1), 1, 12))\n"), 5, 16,
              "width must be a constant power of two from 1 to 32");
  ExpectError(Func("    T.evaluate(T.tvm_warp_shuffle_down(T.float32(1), 1))\n"), 5, 16,
              "takes 3 arguments, got 2");
}

TEST(ParserErrors, RedefinitionAndReserved) {
  ExpectError(Func("    for i, i in T.grid(4, 4):\n        T.evaluate(0)\n"), 5, 12,
              "'i' is already defined in this scope");
  ExpectError(Func("    for T in range(4):\n        T.evaluate(0)\n"), 5, 9,
              "'T' is a reserved name");
}

TEST(ParserErrors, RemapMismatch) {
  ExpectError(Func("    for i, j in T.grid(4, 4):\n        with T.block(\"C\"):\n"
                   "            vi, vj = T.axis.remap(\"S\", [i, j])\n            T.evaluate(0)\n"),
              7, 22, "binds 1 variable(s) from 2 loop variable(s) into 2 name(s)");
  ExpectError(Func("    for i in range(4):\n        with T.block(\"C\"):\n"
                   "            vi = T.axis.remap(\"S\", [i + 1])\n            T.evaluate(0)\n"),
              7, 37, "T.axis.remap needs loop variables");
}

TEST(ParserErrors, BlockMetaOutsideBlock) {
  ExpectError(Func("    T.reads(A[0, 0])\n    T.evaluate(0)\n"), 5, 5,
              "T.reads must be directly inside a block");
  ExpectError(
      Func("    with T.block(\"C\"):\n        for i in range(4):\n            with T.init():\n"
           "                T.evaluate(0)\n        T.evaluate(0)\n"),
      7, 18, "T.init() must be directly inside a block");
}

TEST(ParserErrors, BlockOrderTheTextFormRelyOn) {
  ExpectError(Func("    with T.block(\"C\"):\n        B = T.alloc_buffer((4,))\n"
                   "        T.reads(B[0:4])\n        T.evaluate(0)\n"),
              7, 9, "T.reads must come before T.alloc_buffer in block 'C'");
  ExpectError(Func("    for i in range(4):\n        with T.block(\"C\"):\n"
                   "            v = T.axis.spatial(4, i)\n            w = T.axis.spatial(4, v)\n"
                   "            T.evaluate(0)\n"),
              8, 35, "iteration variable 'v' of block 'C' used in a binding");
  ExpectError(Func("    with T.block(\"C\"):\n        for i in range(4):\n"
                   "            B = T.alloc_buffer((i,))\n        T.evaluate(0)\n"),
              7, 17, "T.alloc_buffer must be directly inside a block or the function body");
}

TEST(ParserErrors, EmptyBlockAndChainedComparison) {
  ExpectError(Func("    with T.block(\"C\"):\n        T.reads()\n        T.writes()\n"), 5, 5,
              "block 'C' has no statements");
  ExpectError(Func("    T.evaluate(1 < 2 < 3)\n"), 5, 22, "chained comparisons are not supported");
}

TEST(ParserErrors, MissingDecoratorAndFunctionCount) {
  ExpectError("def main():\n    T.evaluate(0)\n", 1, 1, "expected '@T.prim_func'");
  try {
    ParseFunc("# nothing\n");
    ADD_FAILURE();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.message(), "expected exactly one @T.prim_func, found 0");
  }
}

TEST(ParserErrors, NestingIsBounded) {
  std::string deep(5000, '(');
  // The 420th nested parenthesis is refused.
  ExpectError(Func("    T.evaluate(" + deep + "1" + std::string(5000, ')') + ")\n"), 5, 435,
              "expression nested too deeply");
  ExpectError(Func("    T.evaluate((1\n"), 6, 1, "expected ')', found end of line");
  std::string chain = "1";
  for (int i = 0; i < 3000; ++i) chain += " + 1";
  try {
    ParseFuncs(Func("    T.evaluate(" + chain + ")\n"));
    ADD_FAILURE();
  } catch (const ParseError& e) {
    EXPECT_NE(e.message().find("nested too deeply"), std::string::npos) << e.what();
  }
  std::string indent, body;
  for (int i = 0; i < 80; ++i) {
    indent += "    ";
    body += indent + "if True:\n";
  }
  body += indent + "    T.evaluate(0)\n";
  try {
    ParseFuncs(Func(body));
    ADD_FAILURE();
  } catch (const ParseError& e) {
    EXPECT_NE(e.message().find("too many indentation levels"), std::string::npos) << e.what();
  }
}

TEST(Parser, OlderTvmStyleMatchBufferAndPrivate) {
  PrimFunc f = ParseFunc(R"(from tvm.script import tir as T

@T.prim_func(private=True)
def two_elementwise(a: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (128, 128), "float32")
    B = T.alloc_buffer((128, 128), "float32")
    C = T.match_buffer(c, [128, 128], dtype="float32")
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads([A[vi, vj]])
            T.writes([B[vi, vj]])
            B[vi, vj] = A[vi, vj] * 2.0
    for i in T.serial(0, 128):
        for j in T.thread_binding(0, 128, thread="threadIdx.x"):
            with T.sblock("C"):
                vi = T.axis.S(128, i)
                vj = T.axis.R(128, j)
                C[vi, vj] = T.Select(T.And(T.Not(vi < 1), True), B[vi, vj] + T.float32(1), T.truncdiv(1.0, 2.0))
)");
  EXPECT_EQ(f.name, "two_elementwise");
  ASSERT_EQ(f.params.size(), 2u);
  EXPECT_EQ(f.params[0].name(), "A");
  EXPECT_EQ(f.params[1].name(), "C");
  ASSERT_EQ(f.root_block().alloc_buffers.size(), 1u);
  EXPECT_EQ(f.root_block().alloc_buffers[0].name(), "B");
  EXPECT_TRUE(f.attrs.at("tir.noalias").dtype().is_bool());
  std::string text = ToText(f);
  EXPECT_EQ(ToText(ParseFunc(text)), text);
  EXPECT_NE(
      text.find("def two_elementwise(A: T.Buffer((128, 128), \"float32\"), C: T.Buffer((128, 128), "
                "\"float32\")):\n"
                "    T.func_attr({\"global_symbol\": \"main\", \"tir.noalias\": T.bool(True)})\n"
                "    # with T.block(\"root\"):\n    B = T.alloc_buffer((128, 128))\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("B[vi, vj] = A[vi, vj] * T.float32(2.0)"), std::string::npos) << text;
  EXPECT_NE(text.find("for j in T.thread_binding(128, thread=\"threadIdx.x\"):"),
            std::string::npos);
  EXPECT_NE(text.find("vi, vj = T.axis.remap(\"SR\", [i, j])"), std::string::npos) << text;
}

TEST(Parser, ExplicitRootAndMultipleFunctions) {
  std::string text = std::string(kHeader) +
                     "def f(A: T.Buffer((4,), \"float32\")):\n"
                     "    with T.block(\"root\"):\n"
                     "        B = T.alloc_buffer((4,))\n"
                     "        for i in range(4):\n"
                     "            B[i] = A[i]\n"
                     "\n@T.prim_func\n"
                     "def g(A: T.Buffer((), \"int8\")):\n"
                     "    A[()] = T.int8(-3)\n";
  std::vector<PrimFunc> fs = ParseFuncs(text);
  ASSERT_EQ(fs.size(), 2u);
  EXPECT_EQ(fs[0].root_block().alloc_buffers.size(), 1u);
  // Without annotations the explicit root is printed implicitly.
  EXPECT_NE(ToText(fs[0]).find("    # with T.block(\"root\"):\n    B = T.alloc_buffer((4,))\n"),
            std::string::npos);
  EXPECT_EQ(fs[1].name, "g");
  EXPECT_NE(ToText(fs[1]).find("    A[()] = T.int8(-3)\n"), std::string::npos) << ToText(fs[1]);
}

TEST(Parser, ConstantsKeepTheirTypeAndValue) {
  PrimFunc f =
      ParseFunc(Func("    A[0, 0] = T.float32(-3.4028234663852886e+38)\n"
                     "    A[0, 1] = T.float32(\"-inf\")\n"
                     "    A[0, 2] = T.Cast(\"float32\", T.int64(-9223372036854775808) + "
                     "T.uint64(18446744073709551615))\n"
                     "    A[0, 3] = T.Cast(\"float32\", -2147483648)\n"));
  const auto& seq = f.root_block().body.as<SeqStmtNode>()->seq;
  double v = 0;
  ASSERT_TRUE(AsConstFloat(seq[0].as<BufferStoreNode>()->value, &v));
  EXPECT_EQ(v, -3.4028234663852886e+38);
  const auto* cast = seq[3].as<BufferStoreNode>()->value.as<CastNode>();
  ASSERT_NE(cast, nullptr);
  EXPECT_EQ(cast->value.dtype(), DataType::Int32());
  std::string text = ToText(f);
  EXPECT_NE(text.find("T.int64(-9223372036854775808)"), std::string::npos) << text;
  EXPECT_NE(text.find("T.Cast(\"float32\", -2147483648)"), std::string::npos) << text;
  EXPECT_EQ(ToText(ParseFunc(text)), text);
}

// Inputs that are easy to print wrongly: each must reach a fixed point after
// one print.
TEST(Parser, TrickyInputsReachFixedPoint) {
  const char* bodies[] = {
      // Negative literals, unary minus, mixed integer widths.
      "    A[0, 0] = T.Cast(\"float32\", -2147483648 - -(5) + - -3)\n"
      "    A[0, 1] = -A[0, 0] * -T.float32(2.5)\n"
      "    A[0, 2] = T.Cast(\"float32\", T.int64(3) + 2 * T.Cast(\"int8\", 1))\n",
      // Shadowing and sibling reuse of names.
      "    for i in range(4):\n        for i in range(4):\n            A[i, i] = T.float32(1)\n"
      "    for i in range(4):\n        A[i, 0] = T.float32(2)\n",
      // An inner extent depending on the outer loop breaks the grid.
      "    for i in range(4):\n        for j in range(i):\n            for k in range(3):\n"
      "                A[i, j] = T.float32(0)\n",
      // A lone block named "root" inside the implicit root, with and without
      // function-level allocations.
      "    with T.block(\"root\"):\n        with T.block(\"root\"):\n            T.evaluate(0)\n",
      "    B = T.alloc_buffer((4,))\n    with T.block(\"root\"):\n        B[0] = T.float32(0)\n",
      // Region bounds of every shape.
      "    for i in range(4):\n        with T.block(\"b\"):\n            vi = T.axis.spatial((1, 5), i + 1)\n"
      "            T.reads(A[vi - 1:vi + 2, 0:i], A[2:vi, T.int64(0):T.int64(4)])\n"
      "            T.writes(A[i * 2:i * 2 + (i + 1), i:i + 4 - i])\n            T.evaluate(vi)\n",
      // Comparisons and logic needing parentheses.
      "    T.evaluate(T.Select((1 < 2) == (not True), (1 < 2) != False, not (True and False or True)))\n",
  };
  for (const char* body : bodies) {
    std::string text = Func(body);
    SCOPED_TRACE(text);
    std::string printed;
    ASSERT_NO_THROW(printed = ToText(ParseFunc(text)));
    std::string again;
    ASSERT_NO_THROW(again = ToText(ParseFunc(printed))) << printed;
    EXPECT_EQ(again, printed);
  }
}

}  // namespace
}  // namespace kiln::ir
