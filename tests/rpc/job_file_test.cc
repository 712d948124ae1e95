// Job files are parsed by Protobuf (text format and JSON mapping): a good
// file gives the job, a wrong field name or type is an error naming the file,
// the line and the field, and what Protobuf cannot check is validated.
#include "rpc/farm/job_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace kiln::rpc::farm {
namespace {

using ::testing::HasSubstr;

const char* kText = R"(# a small job
name: "gmm"
workloads { spec: "GMM:0" weight: 2 }
workloads { spec: "C2D:0" }
target { spec: "llvm -num-cores=1" }
trials: 12
seed: 7
strategy { name: "replay" trials_per_iter: 4 }
timing { number: 1 repeat: 1 min_repeat_ms: 1 }
priority: 3
)";

std::string ErrorOf(std::string_view text, JobFileFormat f) {
  try {
    ParseJobText(text, f, "job");
  } catch (const JobFileError& e) {
    return e.what();
  }
  return "no error";
}

// The farm's own checks come after parsing (rpc/farm/job_file.h).
std::string FarmErrorOf(std::string_view text, JobFileFormat f) {
  try {
    ValidateJob(ParseJobText(text, f, "job"));
  } catch (const JobFileError& e) {
    return e.what();
  }
  return "no error";
}

TEST(JobFile, ParsesTextFormat) {
  v1::TuningJob j = ParseJobText(kText, JobFileFormat::kText, "job.textproto");
  ASSERT_EQ(j.workloads_size(), 2);
  EXPECT_EQ(j.workloads(0).spec(), "GMM:0");
  EXPECT_EQ(j.workloads(0).weight(), 2);
  EXPECT_EQ(j.target().spec(), "llvm -num-cores=1");
  EXPECT_EQ(j.trials(), 12);
  EXPECT_EQ(j.seed(), 7u);
  EXPECT_EQ(j.strategy().trials_per_iter(), 4);
  EXPECT_EQ(j.timing().min_repeat_ms(), 1);
  EXPECT_EQ(j.priority(), 3);
}

TEST(JobFile, ParsesTheJsonMapping) {
  const char* json = R"({
  "workloads": [{"spec": "GMM:0"}],
  "target": {"spec": "llvm -num-cores=1"},
  "trials": "8",
  "seed": 1,
  "strategy": {"trialsPerIter": 4}
})";
  v1::TuningJob j = ParseJobText(json, JobFileFormat::kJson, "job.json");
  EXPECT_EQ(j.trials(), 8);
  EXPECT_EQ(j.strategy().trials_per_iter(), 4);
}

TEST(JobFile, AWrongFieldNameIsNamedWithItsLine) {
  std::string text = kText;
  text.replace(text.find("trials: 12"), 10, "trails: 12");
  const std::string e = ErrorOf(text, JobFileFormat::kText);
  EXPECT_THAT(e, HasSubstr("job:6:"));
  EXPECT_THAT(e, HasSubstr("trails"));

  const char* json = "{\n  \"workloads\": [{\"spec\": \"GMM:0\"}],\n  \"target\": {\"spec\": \"host\"},\n"
                     "  \"trials\": 4,\n  \"wieght\": 2\n}";
  const std::string je = ErrorOf(json, JobFileFormat::kJson);
  EXPECT_THAT(je, HasSubstr("job:5:"));
  EXPECT_THAT(je, HasSubstr("wieght"));
}

TEST(JobFile, AWrongTypeIsNamedWithItsLine) {
  std::string text = kText;
  text.replace(text.find("seed: 7"), 7, "seed: \"seven\"");
  const std::string e = ErrorOf(text, JobFileFormat::kText);
  EXPECT_THAT(e, HasSubstr("job:7:"));
  EXPECT_THAT(e, HasSubstr("seed"));

  const char* json = "{\n  \"workloads\": [{\"spec\": \"GMM:0\"}],\n  \"trials\": \"many\"\n}";
  const std::string je = ErrorOf(json, JobFileFormat::kJson);
  EXPECT_THAT(je, HasSubstr("job:3:"));
  EXPECT_THAT(je, HasSubstr("trials"));
}

TEST(JobFile, ValidatesWhatProtobufCannot) {
  auto with = [](const std::string& from, const std::string& to) {
    std::string t = kText;
    t.replace(t.find(from), from.size(), to);
    return ErrorOf(t, JobFileFormat::kText);
  };
  auto farm_with = [](const std::string& from, const std::string& to) {
    std::string t = kText;
    t.replace(t.find(from), from.size(), to);
    return FarmErrorOf(t, JobFileFormat::kText);
  };
  // Unset trials, an unknown strategy or no target are fine for a local job
  // (kiln tune --job, which names the bad strategy itself), not for the farm.
  EXPECT_EQ(with("trials: 12", "trials: 0"), "no error");
  EXPECT_THAT(farm_with("trials: 12", "trials: 0"), HasSubstr("trials: 0"));
  EXPECT_EQ(with("name: \"replay\"", "name: \"evolutionary\""), "no error");
  EXPECT_EQ(farm_with("name: \"replay\"", "name: \"evolutionary\""), "no error");
  EXPECT_EQ(with("name: \"replay\"", "name: \"annealing\""), "no error");
  EXPECT_THAT(farm_with("name: \"replay\"", "name: \"annealing\""),
              HasSubstr("strategy.name: 'annealing'; the farm knows 'replay' and 'evolutionary'"));
  EXPECT_EQ(with("target { spec: \"llvm -num-cores=1\" }", ""), "no error");
  EXPECT_THAT(farm_with("target { spec: \"llvm -num-cores=1\" }", ""), HasSubstr("target.spec: empty"));
  EXPECT_EQ(FarmErrorOf(kText, JobFileFormat::kText), "no error");
  EXPECT_THAT(with("trials: 12", "trials: 1"), HasSubstr("each needs at least one"));
  EXPECT_THAT(with("weight: 2", "weight: -1"), HasSubstr("workloads[0].weight"));
  EXPECT_THAT(with("number: 1", "number: -4"), HasSubstr("timing.number -4"));
  EXPECT_THAT(ErrorOf("trials: 3 target { spec: \"host\" }", JobFileFormat::kText), HasSubstr("workloads: none"));
}

TEST(JobFile, ReadsFilesByExtension) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string text_path = (dir / ("kiln_job_" + std::to_string(getpid()) + ".textproto")).string();
  std::ofstream(text_path) << kText;
  EXPECT_EQ(ParseJobFile(text_path).trials(), 12);
  std::filesystem::remove(text_path);
  EXPECT_THAT(
      [&] {
        try {
          ParseJobFile(text_path);
        } catch (const JobFileError& e) {
          return std::string(e.what());
        }
        return std::string();
      }(),
      HasSubstr("cannot read"));
  // The shipped example parses.
  EXPECT_GE(ParseJobFile(std::string(KILN_SOURCE_DIR) + "/configs/jobs/gmm_small.textproto").trials(), 1);
  EXPECT_GE(ParseJobFile(std::string(KILN_SOURCE_DIR) + "/configs/jobs/gmm_small.json").trials(), 1);
}

}  // namespace
}  // namespace kiln::rpc::farm
