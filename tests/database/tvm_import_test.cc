// TVM MetaSchedule databases in and out (database/tvm_import.h,
// database/tvm_export.h, database/tvm_graph.h): TVM's own database from a
// short tune_tir run (tests/data/tvm/metaschedule_gmm) imports, its records
// are stored unverified with their provenance, the best replays with the
// workload's result; what does not convert or replay is reported by line.
#include "database/tvm_import.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "database/base64.h"
#include "database/database.h"
#include "database/tvm_export.h"
#include "database/tvm_graph.h"
#include "database/tvm_target.h"
#include "ir/schedule/schedule.h"
#include "ir/structural_equal.h"
#include "ir/workloads/suite.h"
#include "tests/schedule/schedule_test_util.h"

namespace kiln::database {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path DataDir() { return fs::path(KILN_SOURCE_DIR) / "tests/data/tvm/metaschedule_gmm"; }

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TvmImportReport ImportText(Database& db, const std::string& workloads, const std::string& records,
                           std::optional<std::string> target = std::nullopt) {
  std::istringstream w(workloads), r(records);
  TvmImportOptions opts;
  opts.target = std::move(target);
  return ImportTvmDatabase(db, w, r, opts);
}

TvmImportReport ImportCommitted(Database& db) {
  return ImportText(db, ReadFile(DataDir() / "database_workload.json"),
                    ReadFile(DataDir() / "database_tuning_record.json"));
}

TEST(TvmImport, TvmsOwnDatabaseImportsUnverifiedWithProvenance) {
  Database db = Database::InMemory();
  TvmImportReport r = ImportCommitted(db);
  for (const auto& p : r.problems) ADD_FAILURE() << p;
  EXPECT_EQ(r.workloads, 1);
  EXPECT_GE(r.records, 16);
  EXPECT_EQ(r.imported, r.records);
  EXPECT_EQ(r.skipped_replay, 0);
  // TVM's GMM:0 is Kiln's GMM:0.
  auto id = db.FindWorkload(ir::MakeWorkload("GMM", 0));
  ASSERT_TRUE(id.has_value());
  int64_t n = 0;
  db.ForEachRecord([&](WorkloadId w, const TuningRecord& rec) {
    EXPECT_EQ(w, *id);
    EXPECT_FALSE(rec.verified);
    EXPECT_EQ(rec.provenance.source, "tvm");
    EXPECT_EQ(rec.provenance.source_run_seconds, rec.run_seconds);
    EXPECT_EQ(rec.target, "llvm -num-cores=2");
    ASSERT_EQ(rec.args.size(), 3u);
    EXPECT_EQ(rec.args[2].shape, (std::vector<int64_t>{1, 128, 128}));
    ++n;
  });
  EXPECT_EQ(n, r.imported);
  // Unverified records are never a tuned result.
  EXPECT_TRUE(db.TopK(*id, "llvm -num-cores=2", 5).empty());
  // Importing again adds nothing.
  TvmImportReport again = ImportCommitted(db);
  EXPECT_EQ(again.imported, 0);
  EXPECT_EQ(again.duplicates, r.imported);
}

TEST(TvmImport, TheImportedBestReplaysAndComputesTheWorkload) {
  Database db = Database::InMemory();
  ImportCommitted(db);
  std::optional<TuningRecord> best;
  db.ForEachRecord([&](WorkloadId, const TuningRecord& rec) {
    if (rec.status != kStatusOk) return;
    if (!best || rec.median_seconds < best->median_seconds) best = rec;
  });
  ASSERT_TRUE(best.has_value()) << "TVM's run measured nothing successfully";
  EXPECT_GT(best->median_seconds, 0);
  EXPECT_LT(best->median_seconds, 1.0);
  const ir::PrimFunc gmm = ir::MakeWorkload("GMM", 0);
  ir::Schedule sch(gmm);
  ir::Trace::FromJSONString(best->trace_json).ApplyToSchedule(&sch, false);
  EXPECT_FALSE(ir::StructuralEqual(gmm, sch.func()));
  EXPECT_TRUE(ir::testing::SameResult(gmm, sch.func()));
  EXPECT_TRUE(ir::testing::WellFormed(sch.func()));
}

TEST(TvmImport, TargetOverrideStoresUnderTheGivenTarget) {
  Database db = Database::InMemory();
  ImportText(db, ReadFile(DataDir() / "database_workload.json"),
             ReadFile(DataDir() / "database_tuning_record.json"), "llvm -mcpu=znver4 -num-cores=2");
  EXPECT_EQ(db.Targets(), (std::vector<std::string>{"llvm -mcpu=znver4 -num-cores=2"}));
}

std::string FirstRecordLine() {
  std::istringstream in(ReadFile(DataDir() / "database_tuning_record.json"));
  std::string line;
  std::getline(in, line);
  return line;
}

TEST(TvmImport, BadLinesAreReportedByLineAndSkippedWithCounts) {
  Database db = Database::InMemory();
  std::string workloads = ReadFile(DataDir() / "database_workload.json");
  json good = json::parse(FirstRecordLine());
  // A trace naming a block the workload does not have.
  json bad_trace = good;
  bad_trace[1][0] = json::parse(R"([[["GetSBlock", [], ["nope", "main"], ["b0"]]], []])");
  json bad_target = good;
  bad_target[1][2] = json{{"kind", "rocm"}};
  json bad_index = good;
  bad_index[0] = 7;
  std::string records = good.dump() + "\n" + bad_trace.dump() + "\nnot json\n" + bad_target.dump() +
                        "\n" + bad_index.dump() + "\n";
  TvmImportReport r = ImportText(db, workloads, records);
  EXPECT_EQ(r.records, 5);
  EXPECT_EQ(r.imported, 1);
  EXPECT_EQ(r.skipped_replay, 1);
  EXPECT_EQ(r.skipped_other, 3);
  ASSERT_EQ(r.problems.size(), 4u);
  EXPECT_NE(r.problems[0].find("database_tuning_record.json:2: trace does not replay"),
            std::string::npos)
      << r.problems[0];
  EXPECT_NE(r.problems[0].find("nope"), std::string::npos) << r.problems[0];
  EXPECT_NE(r.problems[1].find(":3: record skipped"), std::string::npos) << r.problems[1];
  EXPECT_NE(r.problems[2].find("rocm"), std::string::npos) << r.problems[2];
  EXPECT_NE(r.problems[3].find("workload index 7"), std::string::npos) << r.problems[3];
}

// Replaces the first node of kind `from` in a workload line's graph.
std::string WorkloadWithNodeKind(const std::string& from, const std::string& to) {
  json line = json::parse(ReadFile(DataDir() / "database_workload.json"));
  json graph = json::parse(DecodeTvmWorkloadBlob(line[1].get<std::string>()));
  for (json& n : graph["nodes"]) {
    if (n["type"] == from) {
      n["type"] = to;
      break;
    }
  }
  line[1] = EncodeBase64(graph.dump());  // the older, unprefixed blob form
  return line.dump() + "\n";
}

TEST(TvmImport, AWorkloadThatDoesNotConvertNamesTheNodeKind) {
  Database db = Database::InMemory();
  TvmImportReport r = ImportText(db, WorkloadWithNodeKind("tirx.BufferStore", "tirx.Allocate"),
                                 FirstRecordLine() + "\n");
  EXPECT_EQ(r.workloads, 0);
  EXPECT_EQ(r.skipped_workload, 1);
  ASSERT_EQ(r.problems.size(), 2u);
  EXPECT_NE(r.problems[0].find("database_workload.json:1: workload skipped"), std::string::npos)
      << r.problems[0];
  EXPECT_NE(r.problems[0].find("cannot convert node kind 'tirx.Allocate'"), std::string::npos)
      << r.problems[0];
  EXPECT_EQ(db.Size(), 0);
}

TEST(TvmGraph, EverySuiteWorkloadSurvivesExportAndImport) {
  for (const std::string& name : ir::SuiteNames()) {
    SCOPED_TRACE(name);
    ir::PrimFunc f = ir::MakeWorkload(name, 0);
    json graph = PrimFuncToTvmGraph(f);
    ir::PrimFunc back = PrimFuncFromTvmGraph(json::parse(graph.dump()));
    EXPECT_TRUE(ir::StructuralEqual(f, back));
  }
}

TEST(TvmGraph, MalformedGraphsAreErrorsNotCrashes) {
  const char* cases[] = {
      R"({})",
      R"({"root_index": 5, "nodes": []})",
      R"({"root_index": 0, "nodes": [{"type": "None"}]})",
      R"({"root_index": 1, "nodes": [{"type": "None"}, {"type": "ir.IRModule", "data": {}}]})",
      R"({"root_index": 1, "nodes": [{"type": "None"}, {"type": "tirx.PrimFunc", "data": {"params": 1, "attrs": 0, "body": 0}}]})",
  };
  for (const char* c : cases) {
    SCOPED_TRACE(c);
    EXPECT_THROW(PrimFuncFromTvmGraph(json::parse(c)), TvmImportError);
  }
}

TEST(TvmGraph, SharedNodesThatExpandTooFarAreRefused) {
  // x + x, (x + x) + (x + x), ...: 40 nodes in the graph, 2^40 in the tree
  // that would be printed and stored.
  json graph = json::parse(ReadFile(fs::path(KILN_SOURCE_DIR) /
                                    "tests/data/tvm/fuzz_seeds/graph_tiny.json"));
  json& nodes = graph["nodes"];
  size_t store = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i]["type"] == "tirx.BufferStore") store = i;
  }
  ASSERT_GT(store, 0u);
  int64_t prev = nodes[store]["data"]["value"].get<int64_t>();
  int64_t ty = nodes[static_cast<size_t>(prev)]["data"]["ty"].get<int64_t>();
  for (int i = 0; i < 40; ++i) {
    nodes.push_back(
        json{{"type", "prim.Add"}, {"data", {{"span", 0}, {"ty", ty}, {"a", prev}, {"b", prev}}}});
    prev = static_cast<int64_t>(nodes.size()) - 1;
  }
  nodes[store]["data"]["value"] = prev;
  try {
    PrimFuncFromTvmGraph(graph);
    ADD_FAILURE() << "converted";
  } catch (const TvmImportError& e) {
    EXPECT_NE(std::string(e.what()).find("too large"), std::string::npos) << e.what();
  }
}

TEST(TvmTarget, ConfigsMapBothWays) {
  EXPECT_EQ(TargetFromTvm(json::parse(R"({"kind": "llvm", "keys": ["cpu"], "mtriple":
                "x86_64-conda-linux-gnu", "num-cores": 2, "tag": ""})"))
                .ToString(),
            "llvm -num-cores=2");
  ir::Target t = ir::Target::Parse("llvm -mcpu=znver4 -num-cores=2");
  EXPECT_EQ(TargetFromTvm(TargetToTvm(t)), t);
  ir::Target cuda = ir::Target::Parse("cuda -arch=sm_90");
  EXPECT_EQ(TargetFromTvm(TargetToTvm(cuda)), cuda);
  EXPECT_THROW(TargetFromTvm(json::parse(R"({"kind": "rocm"})")), ir::TargetError);
}

TEST(Base64, RoundTripsAndRefusesGarbage) {
  for (const std::string& s :
       std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\1\2\xff", 4)}) {
    std::string back;
    ASSERT_TRUE(DecodeBase64(EncodeBase64(s), &back));
    EXPECT_EQ(back, s);
  }
  std::string out;
  EXPECT_FALSE(DecodeBase64("abc", &out));
  EXPECT_FALSE(DecodeBase64("ab!d", &out));
  EXPECT_FALSE(DecodeBase64("a=bc", &out));
  EXPECT_FALSE(DecodeBase64("ab==abcd", &out));
}

TEST(TvmExport, WritesWhatTheImportReadsBack) {
  Database db = Database::InMemory();
  ImportCommitted(db);
  std::ostringstream w, r;
  TvmExportReport rep = ExportTvmDatabase(db, w, r);
  EXPECT_EQ(rep.workloads, 1);
  EXPECT_EQ(rep.records, db.Size());
  // Exported records name GetSBlock, as TVM 0.27 does.
  EXPECT_NE(r.str().find("\"GetSBlock\""), std::string::npos);
  EXPECT_EQ(r.str().find("\"GetBlock\""), std::string::npos);
  Database again = Database::InMemory();
  TvmImportReport back = ImportText(again, w.str(), r.str());
  for (const auto& p : back.problems) ADD_FAILURE() << p;
  EXPECT_EQ(back.imported, db.Size());
}

}  // namespace
}  // namespace kiln::database
