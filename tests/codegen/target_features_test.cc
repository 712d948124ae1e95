// Canonical CPU targets (codegen/target_features.h): the short form a TVM
// user types, feature differences kept, implied features dropped; and which
// targets can run records tuned for another.
#include "codegen/target_features.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "codegen/llvm_backend.h"

namespace kiln::codegen {
namespace {

ir::Target Canon(const std::string& s) { return CanonicalTarget(ir::Target::Parse(s)); }

bool Has(const std::vector<std::string>& v, const std::string& f) {
  return std::find(v.begin(), v.end(), f) != v.end();
}

// The feature list a CPU implies, spelled out as -mattr (what `host` used
// to store: every detected feature, plus the triple).
std::string SpelledOut(const std::string& cpu) {
  std::string mattr;
  for (const std::string& f : EnabledFeatures(ir::Target::Parse("llvm -mcpu=" + cpu)))
    mattr += (mattr.empty() ? "+" : ",+") + f;
  return "llvm -mcpu=" + cpu + " -mattr=" + mattr + " -num-cores=2";
}

TEST(CanonicalTarget, DropsWhatTheCpuImplies) {
  EXPECT_EQ(Canon(SpelledOut("znver4")).ToString(), "llvm -mcpu=znver4 -num-cores=2");
  EXPECT_EQ(Canon(SpelledOut("skylake-avx512")).ToString(),
            "llvm -mcpu=skylake-avx512 -num-cores=2");
  EXPECT_EQ(Canon("llvm -mcpu=haswell -mattr=+avx2,+fma").ToString(), "llvm -mcpu=haswell");
  // Already canonical: unchanged.
  EXPECT_EQ(Canon("llvm -mcpu=znver3 -num-cores=2").ToString(), "llvm -mcpu=znver3 -num-cores=2");
}

TEST(CanonicalTarget, KeepsFeaturesThatDifferAndNoMoreThanNeeded) {
  // A VM that hides AVX-512 from a Zen 4: every AVX-512 extension reads off,
  // and one "-avx512f" says it all (the extensions depend on it).
  std::string hidden = SpelledOut("znver4");
  std::string mattr;
  for (const std::string& f : EnabledFeatures(ir::Target::Parse("llvm -mcpu=znver4"))) {
    const bool avx512 = f.rfind("avx512", 0) == 0;
    mattr += std::string(mattr.empty() ? "" : ",") + (avx512 ? "-" : "+") + f;
  }
  const ir::Target vm = Canon("llvm -mcpu=znver4 -mattr=" + mattr + " -num-cores=2");
  EXPECT_EQ(vm.ToString(), "llvm -mattr=-avx512f -mcpu=znver4 -num-cores=2");
  EXPECT_NE(vm, Canon(hidden)) << "the VM must stay told apart from a real Zen 4";
  const std::vector<std::string> on = EnabledFeatures(vm);
  EXPECT_FALSE(Has(on, "avx512f"));
  EXPECT_FALSE(Has(on, "avx512bw"));
  EXPECT_TRUE(Has(on, "avx2"));
  // An added feature stays as well.
  EXPECT_EQ(Canon("llvm -mcpu=haswell -mattr=+avx512f").ToString(),
            "llvm -mattr=+avx512f -mcpu=haswell");
}

TEST(CanonicalTarget, DefaultTripleDroppedOthersKept) {
#if defined(__x86_64__) && defined(__linux__)
  EXPECT_EQ(Canon("llvm -mcpu=znver3 -mtriple=x86_64-pc-linux-gnu").ToString(), "llvm -mcpu=znver3");
  EXPECT_EQ(Canon("llvm -mcpu=znver3 -mtriple=x86_64-unknown-linux-gnu").ToString(),
            "llvm -mcpu=znver3 -mtriple=x86_64-unknown-linux-gnu");
  // Another spelling of a triple becomes LLVM's normalized one.
  EXPECT_EQ(Canon("llvm -mcpu=znver3 -mtriple=x86_64-linux-gnu").ToString(),
            "llvm -mcpu=znver3 -mtriple=x86_64-unknown-linux-gnu");
#endif
  // A CPU LLVM does not know for the triple: kept as given, nothing implied.
  EXPECT_EQ(Canon("llvm -mcpu=notacpu -mattr=+avx2").ToString(),
            "llvm -mattr=+avx2 -mcpu=notacpu");
  EXPECT_THROW(Canon("llvm -mtriple=nosucharch-unknown-none"), ir::TargetError);
  EXPECT_EQ(Canon("cuda -arch=sm_90").ToString(), "cuda -arch=sm_90");
}

TEST(CanonicalTarget, HostIsShortAndStable) {
  const ir::Target host = HostTarget();
  EXPECT_FALSE(host.mcpu.empty());
  EXPECT_TRUE(host.mtriple.empty()) << host.ToString();
  EXPECT_LT(host.mattr.size(), 8u) << "host should differ from its CPU in a few features at most: "
                                   << host.ToString();
  EXPECT_EQ(CanonicalTarget(host), host);
  EXPECT_EQ(CanonicalTarget(ir::Target::Parse(host.ToString())), host);
  EXPECT_EQ(ResolveTarget("host"), host);
}

TEST(CanonicalTarget, IgnoresSystemFeatures) {
  // What this very machine kind showed: a Zen 3 VM without MWAITX and RDPRU
  // but with shadow stacks is still a Zen 3 to the code Kiln emits.
  EXPECT_EQ(Canon("llvm -mcpu=znver3 -mattr=-mwaitx,-rdpru,+shstk,+avx2 -num-cores=2").ToString(),
            "llvm -mcpu=znver3 -num-cores=2");
  // Compatibility ignores them too, but not an ISA feature.
  const ir::Target zen3 = ir::Target::Parse("llvm -mcpu=znver3 -num-cores=2");
  std::string why;
  EXPECT_TRUE(CompatibleTarget(
      zen3, ir::Target::Parse("llvm -mcpu=znver3 -mattr=-mwaitx,-rdpru,-clzero -num-cores=2"), &why))
      << why;
  EXPECT_FALSE(CompatibleTarget(zen3, ir::Target::Parse("llvm -mcpu=znver3 -mattr=-avx2 -num-cores=2"),
                                &why));
  EXPECT_NE(why.find("avx2"), std::string::npos) << why;
}

TEST(TargetHasFeature, KnowsWhatTheCpuImplies) {
  const ir::Target skx = Canon("llvm -mcpu=skylake-avx512");
  EXPECT_TRUE(skx.mattr.empty());
  EXPECT_FALSE(skx.HasFeature("avx512f")) << "ir::Target only sees -mattr";
  EXPECT_TRUE(TargetHasFeature(skx, "avx512f"));
  EXPECT_FALSE(TargetHasFeature(Canon("llvm -mcpu=haswell"), "avx512f"));
  EXPECT_FALSE(TargetHasFeature(Canon("cuda -arch=sm_90"), "avx512f"));
}

TEST(CompatibleTarget, SubsetOfFeaturesAndSameCores) {
  const ir::Target haswell = Canon("llvm -mcpu=haswell -num-cores=2");
  const ir::Target skx = Canon("llvm -mcpu=skylake-avx512 -num-cores=2");
  std::string why;
  EXPECT_TRUE(CompatibleTarget(haswell, skx, &why)) << why;
  EXPECT_FALSE(CompatibleTarget(skx, haswell, &why));
  EXPECT_NE(why.find("avx512f"), std::string::npos) << why;
  EXPECT_FALSE(CompatibleTarget(haswell, Canon("llvm -mcpu=skylake-avx512 -num-cores=4"), &why));
  EXPECT_NE(why.find("core"), std::string::npos) << why;
  EXPECT_FALSE(CompatibleTarget(Canon("cuda -arch=sm_80"), Canon("cuda -arch=sm_90"), &why));
  EXPECT_TRUE(CompatibleTarget(skx, skx));
}

// What decides whether a shipped cost model may start a run: the vector
// width and FMA, not the CPU's name, its other features or its core count.
TEST(SameVectorUnits, VectorWidthAndFmaDecide) {
  const ir::Target rkl = Canon("llvm -mcpu=rocketlake -num-cores=2");
  const ir::Target spr = Canon("llvm -mcpu=sapphirerapids -num-cores=8");
  const ir::Target zen4 = Canon("llvm -mcpu=znver4 -num-cores=2");
  const ir::Target zen3 = Canon("llvm -mcpu=znver3 -num-cores=2");
  const ir::Target haswell = Canon("llvm -mcpu=haswell -num-cores=2");
  std::string why;
  EXPECT_TRUE(SameVectorUnits(rkl, spr, &why)) << why;  // AMX and 8 cores aside
  EXPECT_TRUE(SameVectorUnits(rkl, zen4, &why)) << why;
  EXPECT_TRUE(SameVectorUnits(zen3, haswell, &why)) << why;
  EXPECT_FALSE(SameVectorUnits(rkl, zen3, &why));
  EXPECT_NE(why.find("avx512f is on for 'llvm -mcpu=rocketlake"), std::string::npos) << why;
  // A Zen 4 whose AVX-512 a virtual machine hides is an AVX2 machine.
  EXPECT_TRUE(SameVectorUnits(Canon("llvm -mcpu=znver4 -mattr=-avx512f -num-cores=2"), zen3, &why))
      << why;
  // Generic x86-64: SSE2 only.
  EXPECT_FALSE(SameVectorUnits(Canon("llvm -num-cores=1"), haswell, &why));
  EXPECT_NE(why.find("avx2"), std::string::npos) << why;
  EXPECT_TRUE(SameVectorUnits(Canon("llvm -num-cores=1"), Canon("llvm -num-cores=4")));
  EXPECT_FALSE(SameVectorUnits(Canon("cuda -arch=sm_90"), Canon("cuda -arch=sm_90"), &why));
  EXPECT_NE(why.find("CPU"), std::string::npos) << why;
}

}  // namespace
}  // namespace kiln::codegen
