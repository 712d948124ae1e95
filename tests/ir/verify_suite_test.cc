// VerifyFunc over the workload suite and the workload files: all clean.
#include "ir/verify.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ir/text/parser.h"
#include "ir/workloads/suite.h"
#include "tests/ir/verify_test_util.h"

namespace kiln::ir {
namespace {

using namespace verify_test;  // NOLINT(build/namespaces): the shared builders
using ::testing::HasSubstr;

// ---- the workload suite -------------------------------------------------------------------------

std::string ReadText(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(VerifySuiteTest, WorkloadFilesVerifyClean) {
  std::filesystem::path dir = std::filesystem::path(KILN_SOURCE_DIR) / "configs/workloads";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir << " is missing";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".py") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 10u);
  for (const auto& path : files) {
    SCOPED_TRACE(path.filename().string());
    PrimFunc f;
    ASSERT_NO_THROW(f = ParseFunc(ReadText(path), path.filename().string()));
    ExpectClean(f);
  }
}

TEST(VerifySuiteTest, SuiteWorkloadsVerifyClean) {
  auto configs = SuiteConfigs();
  ASSERT_FALSE(configs.empty());
  for (const auto& c : configs) {
    SCOPED_TRACE(c.name + "_" + std::to_string(c.index));
    ExpectClean(MakeWorkload(c.name, c.index));
  }
}


}  // namespace
}  // namespace kiln::ir
