// TVM-printed functions (tests/data/tvmscript) parse, and printing them
// gives back the file byte for byte.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/text/parser.h"
#include "ir/text/printer.h"

namespace kiln::ir {
namespace {

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::filesystem::path> DataFiles() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(KILN_SOURCE_DIR) /
                                                           "tests/data/tvmscript")) {
    if (e.path().extension() == ".py") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(TvmScriptFiles, AtLeastFiveInputs) { EXPECT_GE(DataFiles().size(), 5u); }

TEST(TvmScriptFiles, ParseAndReprintIdentically) {
  for (const auto& path : DataFiles()) {
    SCOPED_TRACE(path.filename().string());
    std::string text = ReadFile(path);
    PrimFunc f;
    ASSERT_NO_THROW(f = ParseFunc(text, path.filename().string()));
    std::string printed = ToText(f);
    EXPECT_EQ(printed, text);
    EXPECT_EQ(ToText(ParseFunc(printed)), printed);
  }
}

}  // namespace
}  // namespace kiln::ir
