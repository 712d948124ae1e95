// Config files against their schemas: every shipped config validates, and an
// unknown field, a wrong type or a bad value is an error naming the file, the
// line and the field.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/json_location.h"
#include "config/presets.h"

namespace {

namespace fs = std::filesystem;
using kiln::config::ConfigError;
using kiln::config::ConfigFormat;

// The error message of parsing `text` as a target preset named `name`.
std::string TargetError(const std::string& text, const std::string& name = "configs/targets/t.json",
                        ConfigFormat format = ConfigFormat::kJson) {
  try {
    kiln::config::ParseTargetPreset(text, format, name);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string SearchError(const std::string& text, const std::string& name = "configs/search/s.json",
                        ConfigFormat format = ConfigFormat::kJson) {
  try {
    kiln::config::ParseSearchPreset(text, format, name);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Configs, EveryShippedConfigValidates) {
  int checked = 0;
  for (const char* sub : {"targets", "search", "jobs"}) {
    const fs::path dir = fs::path(KILN_SOURCE_DIR) / "configs" / sub;
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".json" && ext != ".textproto") continue;
      EXPECT_NO_THROW({
        try {
          kiln::config::CheckConfigFile(entry.path().string(), std::nullopt);
        } catch (const std::exception& e) {
          ADD_FAILURE() << e.what();
          throw;
        }
      }) << entry.path();
      ++checked;
    }
  }
  // The five target presets, three search presets and the job files.
  EXPECT_GE(checked, 12);
  auto h200 =
      kiln::config::LoadTargetPreset(std::string(KILN_SOURCE_DIR) + "/configs/targets/h200.json");
  EXPECT_EQ(h200.target(), "cuda -arch=sm_90");
  EXPECT_GT(h200.peak_fp32_gflops(), 0);
  auto quick =
      kiln::config::LoadSearchPreset(std::string(KILN_SOURCE_DIR) + "/configs/search/quick.json");
  EXPECT_EQ(quick.strategy(), "replay");
  EXPECT_EQ(quick.trials_per_iter(), 16);
}

TEST(Configs, UnknownFieldNamesFileLineAndField) {
  const std::string e = TargetError("{\n  \"target\": \"llvm\",\n  \"coress\": 2\n}\n");
  EXPECT_NE(e.find("configs/targets/t.json:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("'coress'"), std::string::npos) << e;
  EXPECT_NE(e.find("kiln.v1.TargetPreset"), std::string::npos) << e;
}

TEST(Configs, WrongTypeNamesFileLineAndField) {
  const std::string e = TargetError("{\"target\": \"llvm\",\n\n \"cores\": \"four\"}");
  EXPECT_NE(e.find("t.json:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("cores"), std::string::npos) << e;
  const std::string list = TargetError("{\"target\": \"llvm\",\n \"sources\": 7}");
  EXPECT_NE(list.find("t.json:2:"), std::string::npos) << list;
  EXPECT_NE(list.find("sources"), std::string::npos) << list;
}

TEST(Configs, NestedFieldsFindTheirOwnLine) {
  // "number" also appears higher up as a value: the line is the key's, in timing.
  const std::string text =
      "{\n \"description\": \"number\",\n \"strategy\": \"replay\",\n \"timing\": {\n  \"repeat\": "
      "1,\n"
      "  \"numbr\": 3\n }\n}\n";
  const std::string e = SearchError(text);
  EXPECT_NE(e.find("s.json:6:"), std::string::npos) << e;
  EXPECT_NE(e.find("numbr"), std::string::npos) << e;
  const std::string bad_type = SearchError("{\"timing\": {\n \"timeoutS\": [1]}}");
  EXPECT_NE(bad_type.find("s.json:2:"), std::string::npos) << bad_type;
  EXPECT_NE(bad_type.find("timeout"), std::string::npos) << bad_type;
}

TEST(Configs, ValuesOutsideTheirRangeNameTheField) {
  EXPECT_NE(SearchError("{\n\"strategy\": \"annealing\"}")
                .find("s.json:2: field 'strategy': 'annealing'"),
            std::string::npos)
      << SearchError("{\n\"strategy\": \"annealing\"}");
  EXPECT_NE(SearchError("{\"trials\": -1}").find("field 'trials'"), std::string::npos);
  const std::string timing = SearchError("{\"timing\":\n {\"number\": -2}}");
  EXPECT_NE(timing.find("s.json:2: field 'timing.number'"), std::string::npos) << timing;
  const std::string cores =
      TargetError("{\"target\": \"llvm -mcpu=znver4 -num-cores=2\",\n\"cores\": 4}");
  EXPECT_NE(cores.find("t.json:2: field 'cores'"), std::string::npos) << cores;
  EXPECT_NE(TargetError("{\"cores\": 4}").find("field 'target': missing"), std::string::npos);
  EXPECT_NE(TargetError("{\"target\": \"llvm -bogus=1\"}").find("field 'target'"),
            std::string::npos);
  const std::string name = TargetError("{\"name\": \"other\", \"target\": \"llvm\"}");
  EXPECT_NE(name.find("field 'name': 'other' but the file is t"), std::string::npos) << name;
}

TEST(Configs, SyntaxErrorsGiveTheLine) {
  const std::string e = TargetError("{\n \"target\": \"llvm\",\n}\n");
  EXPECT_NE(e.find("t.json:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("not valid JSON"), std::string::npos) << e;
}

TEST(Configs, TextFormatErrorsGiveLineAndField) {
  const std::string e =
      TargetError("target: \"llvm\"\ncores: 2\nspeed: 9\n", "t.textproto", ConfigFormat::kText);
  EXPECT_NE(e.find("t.textproto:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("speed"), std::string::npos) << e;
  const std::string type =
      TargetError("target: \"llvm\"\ncores: \"two\"\n", "t.textproto", ConfigFormat::kText);
  EXPECT_NE(type.find("t.textproto:2:"), std::string::npos) << type;
  EXPECT_NE(type.find("cores"), std::string::npos) << type;
  // A semantic error in text format finds its line too.
  const std::string value =
      SearchError("trials: 5\nstrategy: \"annealing\"\n", "s.textproto", ConfigFormat::kText);
  EXPECT_NE(value.find("s.textproto:2: field 'strategy'"), std::string::npos) << value;
}

TEST(Configs, JobFilesGoThroughTheJobSchema) {
  const fs::path dir =
      fs::path(testing::TempDir()) / ("kiln_cfg_" + std::to_string(::getpid())) / "jobs";
  fs::create_directories(dir);
  const fs::path job = dir / "bad.json";
  std::ofstream(job)
      << "{\n \"workloads\": [{\"spec\": \"GMM:0\",\n   \"wieght\": 1}],\n \"trials\": 4\n}\n";
  try {
    kiln::config::CheckConfigFile(job.string(), std::nullopt);
    ADD_FAILURE() << "accepted an unknown field";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("bad.json:3"), std::string::npos) << m;
    EXPECT_NE(m.find("wieght"), std::string::npos) << m;
  }
  // The job's own checks find their field's line too.
  std::ofstream(job)
      << "{\n \"workloads\": [{\"spec\": \"GMM:0\"}],\n \"target\": {\"spec\": \"host\"},\n"
         " \"trials\": 0\n}\n";
  try {
    kiln::config::CheckConfigFile(job.string(), std::nullopt);
    ADD_FAILURE() << "accepted trials: 0";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json:4: field 'trials'"), std::string::npos)
        << e.what();
  }
  // The kind comes from the folder; elsewhere it must be given.
  const fs::path loose = dir.parent_path() / "x.json";
  std::ofstream(loose) << "{}";
  EXPECT_THROW(kiln::config::CheckConfigFile(loose.string(), std::nullopt), ConfigError);
  EXPECT_NO_THROW(
      kiln::config::CheckConfigFile(loose.string(), kiln::config::ConfigKind::kSearchPreset));
  fs::remove_all(dir.parent_path());
}

TEST(Configs, PresetsAreFoundByNameOrPath) {
  const std::string configs = std::string(KILN_SOURCE_DIR) + "/configs";
  EXPECT_EQ(kiln::config::FindPreset("quick", "search", {"no/such/dir", configs}),
            configs + "/search/quick.json");
  const std::string file = configs + "/targets/h100.json";
  EXPECT_EQ(kiln::config::FindPreset(file, "targets", {}), file);
  try {
    kiln::config::FindPreset("zen9", "targets", {configs});
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'zen9'"), std::string::npos) << m;
    EXPECT_NE(m.find("znver4-2core"), std::string::npos) << m;  // lists what exists
  }
}

TEST(JsonLocation, FollowsThePathNotTheFirstMatchingWord) {
  const std::string text =
      "{\"a\": {\"x\": 1},\n \"w\": [\n  {\"x\": 2},\n  {\"y\": 3,\n   \"x\": 4}]}";
  EXPECT_EQ(kiln::config::LineOfJsonPath(text, "a.x"), 1);
  EXPECT_EQ(kiln::config::LineOfJsonPath(text, "w[0].x"), 3);
  EXPECT_EQ(kiln::config::LineOfJsonPath(text, "w[1].x"), 5);
  EXPECT_EQ(kiln::config::LineOfJsonPath(text, "w[1].z"), 0);
  EXPECT_EQ(kiln::config::LineOfJsonPath("{\n\"trials_per_iter\": 1}", "trialsPerIter"), 2);
}

}  // namespace
