// The CPU backend checks the lowered form (ir/transform/lower.h) on every
// build: a program the pipeline cannot bring into it fails the build with
// the contract's words, not in the emitter or as a wrong kernel.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codegen/llvm_backend.h"
#include "ir/op.h"
#include "ir/workloads/suite.h"

namespace kiln::codegen {
namespace {

using ::testing::HasSubstr;

TEST(LoweredContractTest, VariableOutOfScopeFailsTheBuildNamingTheContract) {
  // B[j] = 1 with j bound by no loop: lowering passes it through unchanged.
  ir::Buffer b("B", ir::DataType::Float32(), {ir::IntImm(8)});
  ir::Var j("j");
  ir::PrimFunc f;
  f.name = "out_of_scope";
  f.params = {b};
  f.body = ir::MakeRootBody(ir::BufferStore(b, ir::FloatImm(1), {j}), {});
  try {
    BuildObject(f, ResolveTarget("llvm -mcpu=x86-64 -num-cores=1"));
    FAIL() << "the build should have failed";
  } catch (const BuildError& e) {
    EXPECT_THAT(e.what(), HasSubstr("breaks the contract of ir/transform/lower.h"));
    EXPECT_THAT(e.what(), HasSubstr("j"));
  }
}

TEST(LoweredContractTest, SuiteWorkloadsBuildWithTheCheck) {
  for (const char* name : {"GMM", "C2D", "SFM"}) {
    EXPECT_NO_THROW(BuildObject(ir::MakeWorkload(name, 0),
                                ResolveTarget("llvm -mcpu=x86-64 -num-cores=1")))
        << name;
  }
}

}  // namespace
}  // namespace kiln::codegen
