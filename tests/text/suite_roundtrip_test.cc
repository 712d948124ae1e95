// The whole workload suite through the text form: print → parse is
// structurally the identity, print is a fixed point, the shipped text files
// under configs/workloads/ are current, and the structural hashes are golden.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/structural_equal.h"
#include "ir/structural_hash.h"
#include "ir/workloads/suite.h"

namespace kiln::ir {
namespace {

std::string FileName(const WorkloadConfig& c) {
  return std::string(KILN_SOURCE_DIR) + "/configs/workloads/" + c.name + "_" +
         std::to_string(c.index) + ".py";
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(SuiteText, RoundTripIsStructurallyExactAndAFixedPoint) {
  for (const auto& c : SuiteConfigs()) {
    SCOPED_TRACE(c.name + ":" + std::to_string(c.index));
    PrimFunc f = MakeWorkload(c.name, c.index);
    std::string text = ToText(f);
    PrimFunc back = ParseFunc(text, c.name);
    auto mismatch = StructuralMismatch(f, back);
    EXPECT_FALSE(mismatch.has_value()) << *mismatch;
    EXPECT_EQ(StructuralHash(f), StructuralHash(back));
    EXPECT_EQ(ToText(back), text);
  }
}

TEST(SuiteText, ShippedFilesAreCurrent) {
  for (const auto& c : SuiteConfigs()) {
    const std::string path = FileName(c);
    SCOPED_TRACE(path);
    ASSERT_TRUE(std::filesystem::exists(path))
        << "missing; run scripts/gen_workload_files.sh after building";
    std::string text = Read(path);
    PrimFunc f = MakeWorkload(c.name, c.index);
    PrimFunc parsed = ParseFunc(text, path);
    auto mismatch = StructuralMismatch(f, parsed);
    EXPECT_FALSE(mismatch.has_value()) << *mismatch;
    EXPECT_EQ(text, ToText(f)) << "out of date; run scripts/gen_workload_files.sh";
  }
}

// The structural hash is the database key. These values must not drift: a
// change here means every stored tuning record is orphaned, so it has to be a
// deliberate, versioned format change (see ir/structural_hash.cc).
TEST(SuiteText, GoldenStructuralHashes) {
  const std::map<std::string, std::string> golden = {
#include "golden_suite_hashes.inc"
  };
  ASSERT_EQ(golden.size(), SuiteConfigs().size());
  for (const auto& c : SuiteConfigs()) {
    const std::string spec = c.name + ":" + std::to_string(c.index);
    auto it = golden.find(spec);
    ASSERT_NE(it, golden.end()) << spec;
    EXPECT_EQ(StructuralHashHex(MakeWorkload(c.name, c.index)), it->second) << spec;
  }
}

TEST(SuiteText, HashesAreDistinct) {
  std::map<uint64_t, std::string> seen;
  for (const auto& c : SuiteConfigs()) {
    const std::string spec = c.name + ":" + std::to_string(c.index);
    uint64_t h = StructuralHash(MakeWorkload(c.name, c.index));
    auto [it, inserted] = seen.emplace(h, spec);
    EXPECT_TRUE(inserted) << spec << " hashes like " << it->second;
  }
}

}  // namespace
}  // namespace kiln::ir
