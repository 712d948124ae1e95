// exp and sigmoid of float32 as the CPU backend emits them
// (codegen/llvm_emit_exp.cc: inline range reduction and polynomial, not
// the C library), in serial and vectorized loops, against the C library
// over the whole float range: within 2 ulp where the result is a normal
// float (4 for sigmoid, whose division rounds again), and the same 0, inf,
// NaN and denormal behaviour.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/llvm_backend.h"
#include "ir/ndarray.h"
#include "ir/text/parser.h"

namespace kiln::codegen {
namespace {

constexpr int kN = 1 << 16;

// Distance in representable floats between two finite floats of one sign.
int64_t Ulps(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  return std::abs(static_cast<int64_t>(ia) - static_cast<int64_t>(ib));
}

// Inputs: the special values, a sweep across (and past) the range where
// exp is neither 0 nor inf, and the neighbourhood of the reduction's
// breakpoints (multiples of ln 2 / 2).
std::vector<float> Inputs() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {
      0.0f,      -0.0f,    inf,     -inf,    std::numeric_limits<float>::quiet_NaN(),
      88.72283f, 88.7229f, 89.0f,   1000.0f, -87.33654f,
      -103.0f,   -103.97f, -104.0f, -105.0f, -1000.0f,
      1e-8f,     -1e-8f,   1.0f,    -1.0f};
  for (int k = -300; k <= 260; ++k) {
    const float b = static_cast<float>(k) * 0.34657359f;
    x.insert(x.end(), {std::nextafter(b, -inf), b, std::nextafter(b, inf)});
  }
  while (x.size() < static_cast<size_t>(kN)) {
    x.push_back(-110.0f + 205.0f * static_cast<float>(x.size() % 40009) / 40009.0f);
  }
  x.resize(kN);
  return x;
}

// Runs `text` (A -> E, S, each kN float32) compiled for the host.
void RunKernel(const char* text, const std::vector<float>& in, std::vector<float>* e,
               std::vector<float>* s) {
  ObjectCode code = BuildObject(ir::ParseFunc(text), HostTarget());
  std::unique_ptr<JitKernel> kernel = JitKernel::Load(code);
  std::vector<float> a = in;
  e->assign(kN, 0);
  s->assign(kN, 0);
  std::vector<void*> args = {a.data(), e->data(), s->data()};
  ASSERT_EQ(kernel->Call(args.data()), 0);
}

// Empty when `got` is `want` (the C library's) within `ulps`; else why not.
std::string Mismatch(const char* what, float x, float got, float want, int64_t ulps) {
  bool ok;
  if (std::isnan(x)) {
    ok = std::isnan(got);
  } else if (std::isinf(want) || want == 0 || want == 1) {
    ok = got == want;
  } else if (want < std::numeric_limits<float>::min()) {  // denormal: its ulp is 2^-149
    ok = std::abs(got - want) <= 2 * std::numeric_limits<float>::denorm_min();
  } else {
    ok = std::isfinite(got) && Ulps(got, want) <= ulps;
  }
  if (ok) return "";
  std::ostringstream os;
  os.precision(9);
  os << what << "(" << x << ") = " << got << ", want " << want;
  return os.str();
}

TEST(EmittedExp, MatchesTheCLibraryInSerialAndVectorLoops) {
  const char* serial = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((65536,), "float32"), E: T.Buffer((65536,), "float32"), S: T.Buffer((65536,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    for i in range(65536):
        E[i] = T.exp(A[i])
        S[i] = T.sigmoid(A[i])
)";
  const char* vector = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((65536,), "float32"), E: T.Buffer((65536,), "float32"), S: T.Buffer((65536,), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    for i in range(4096):
        for j in T.vectorized(16):
            E[i * 16 + j] = T.exp(A[i * 16 + j])
    for i in range(8192):
        for j in T.vectorized(8):
            S[i * 8 + j] = T.sigmoid(A[i * 8 + j])
)";
  // No C library call is left: the serial loop vectorizes too.
  for (const char* text : {serial, vector}) {
    const std::string asm_text = EmitAssembly(ir::ParseFunc(text), HostTarget());
    EXPECT_EQ(asm_text.find("expf"), std::string::npos) << asm_text;
  }
  const std::vector<float> in = Inputs();
  for (const char* text : {serial, vector}) {
    std::vector<float> e, s;
    ASSERT_NO_FATAL_FAILURE(RunKernel(text, in, &e, &s));
    std::vector<std::string> bad;
    for (int i = 0; i < kN; ++i) {
      for (std::string m :
           {Mismatch("exp", in[i], e[i], std::exp(in[i]), 2),
            Mismatch("sigmoid", in[i], s[i], 1.0f / (1.0f + std::exp(-in[i])), 4)}) {
        if (!m.empty()) bad.push_back(std::move(m));
      }
    }
    EXPECT_TRUE(bad.empty()) << bad.size() << " mismatch(es), the first: " << bad.front();
  }
}

}  // namespace
}  // namespace kiln::codegen
