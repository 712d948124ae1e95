// Trust in stored measurements (issue 22) against the real local runner and
// a real SQLite file: `kiln db verify`'s library (search/verify_records.h)
// marks a record stale when a re-measure does not reproduce it, and the best
// queries then skip it; --unverified promotes a correct record and refuses a
// wrong one and one that cannot be built; the tuning loop's final re-measure
// (search/remeasure.h) keeps every repeat; the noise figures are stored.
#include "search/verify_records.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <variant>
#include <vector>

#include "database/database.h"
#include "ir/schedule/schedule.h"
#include "ir/structural_hash.h"
#include "ir/target.h"
#include "ir/workloads/suite.h"
#include "search/remeasure.h"
#include "search/replay_trace.h"
#include "search/tune.h"
#include "search_test_util.h"
#if KILN_HAVE_RUNNER
#include "rpc/local_runner.h"
#endif

namespace kiln::search {
namespace {

#if KILN_HAVE_RUNNER

constexpr const char* kTarget = "llvm -num-cores=1";
constexpr const char* kFingerprint = "verify-test machine";

struct TempDb {
  std::string path;
  TempDb() {
    path = (std::filesystem::temp_directory_path() /
            ("kiln_verify_test_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db"))
               .string();
    Cleanup();
  }
  ~TempDb() { Cleanup(); }
  void Cleanup() {
    for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(path + ext);
  }
};

ir::PrimFunc Workload() { return ir::Matmul(64, 64, 64); }

// Two different schedules of the matmul, as trace JSON.
std::string Trace(int variant) {
  ir::Schedule sch(Workload());
  ir::BlockRV c = sch.GetBlock("C");
  std::vector<ir::LoopRV> l = sch.GetLoops(c);
  if (variant == 1) {
    auto i = sch.Split(l[0], {std::monostate{}, int64_t{8}});
    sch.Reorder({i[0], l[1], i[1]});
  } else if (variant == 2) {
    sch.Split(l[1], {std::monostate{}, int64_t{16}});
  }
  return sch.trace().AsJSONString();
}

database::TuningRecord Record(const std::string& trace, std::vector<double> secs, bool verified,
                              const std::string& target = kTarget) {
  database::TuningRecord r;
  r.workload_hash = ir::StructuralHashHex(Workload());
  r.target = target;
  r.fingerprint = kFingerprint;
  r.trace_json = trace;
  r.run_seconds = std::move(secs);
  r.status = database::kStatusOk;
  r.verified = verified;
  return r;
}

VerifyOptions Quick() {
  VerifyOptions o;
  o.timing.number = 1;
  o.timing.repeat = 3;
  o.timing.min_repeat_ms = 1;
  o.timing.timeout_s = 10;
  o.input_seed = 5;
  return o;
}

const VerifiedRecord& Row(const VerifySummary& s, const std::string& trace_json) {
  const std::string hash = database::TraceHash(database::CanonicalTraceJson(trace_json));
  for (const VerifiedRecord& v : s.records) {
    if (v.trace_hash == hash) return v;
  }
  throw std::runtime_error("no row for trace " + hash);
}

std::string HashOf(const std::string& trace_json) {
  return database::TraceHash(database::CanonicalTraceJson(trace_json));
}

TEST(VerifyRecords, MarksARecordThatDoesNotHoldStaleAndTheBestSkipsIt) {
  TempDb file;
  database::Database db = database::Database::Open(file.path);
  const database::WorkloadId wid = db.CommitWorkload(Workload());
  // A record claiming an impossible time (a nanosecond for 2^18 multiply-adds)
  // is the best until it is re-measured; the other one's stored spread is
  // wide enough for any re-measure on a busy machine.
  const std::string fake = Trace(1), honest = Trace(2);
  ASSERT_TRUE(db.CommitRecord(wid, Record(fake, {1e-9, 1.1e-9}, true)));
  ASSERT_TRUE(db.CommitRecord(wid, Record(honest, {1e-7, 10.0}, true)));
  ASSERT_EQ(db.Best(wid, kTarget)->trace_hash, HashOf(fake));

  rpc::LocalRunner runner;
  // Without --mark-stale: flagged, nothing written.
  VerifySummary looked = VerifyRecords(db, runner, Quick());
  ASSERT_EQ(looked.records.size(), 2u);
  EXPECT_EQ(Row(looked, fake).outcome, "slower");
  EXPECT_GT(Row(looked, fake).ratio, 10);
  EXPECT_FALSE(Row(looked, fake).marked_stale);
  EXPECT_EQ(Row(looked, honest).outcome, "ok") << Row(looked, honest).message;
  EXPECT_GT(Row(looked, honest).new_median, 0);
  EXPECT_EQ(looked.flagged, 1);
  EXPECT_EQ(db.Best(wid, kTarget)->trace_hash, HashOf(fake));

  VerifyOptions o = Quick();
  o.mark_stale = true;
  VerifySummary marked = VerifyRecords(db, runner, o);
  EXPECT_TRUE(Row(marked, fake).marked_stale);
  EXPECT_FALSE(Row(marked, honest).marked_stale);
  EXPECT_EQ(marked.marked_stale, 1);
  // The best queries skip the stale record from now on; it is still stored.
  ASSERT_TRUE(db.Best(wid, kTarget).has_value());
  EXPECT_EQ(db.Best(wid, kTarget)->trace_hash, HashOf(honest));
  EXPECT_EQ(db.TopK(wid, kTarget, 5).size(), 1u);
  EXPECT_EQ(db.Stats().usable_records, 1);
  EXPECT_EQ(db.Size(), 2);
  bool seen = false;
  db.ForEachRecord([&](database::WorkloadId, const database::TuningRecord& r) {
    if (r.trace_hash == HashOf(fake)) {
      seen = true;
      EXPECT_TRUE(r.stale);
      EXPECT_EQ(r.run_seconds, (std::vector<double>{1e-9, 1.1e-9}));  // the claim stays on record
    }
  });
  EXPECT_TRUE(seen);
  // A stale record is not verified again as a best.
  EXPECT_EQ(VerifyRecords(db, runner, Quick()).records.size(), 1u);
  // Reopened read-only, as `kiln query` does, the stale mark holds.
  database::Database ro = database::Database::Open(file.path, database::Database::Mode::kReadOnly);
  EXPECT_EQ(ro.Best(wid, kTarget)->trace_hash, HashOf(honest));
}

TEST(VerifyRecords, UnverifiedRecordsArePromotedOrRefused) {
  TempDb file;
  database::Database db = database::Database::Open(file.path);
  const database::WorkloadId wid = db.CommitWorkload(Workload());
  // As an import would store them: status ok, unverified, someone else's times.
  const std::string good = Trace(0), wrong = Trace(1), broken = R"({"insts":[{"kind":"GetBlock",)"
                                                             R"("inputs":[],"attrs":["no_such_block","main"],)"
                                                             R"("outputs":["b0"]}],"decisions":[]})";
  ASSERT_TRUE(db.CommitRecord(wid, Record(good, {0.5}, false)));
  ASSERT_TRUE(db.CommitRecord(wid, Record(wrong, {0.25}, false)));
  ASSERT_TRUE(db.CommitRecord(wid, Record(broken, {0.125}, false)));
  // And one for a GPU, which this runner cannot measure.
  ASSERT_TRUE(db.CommitRecord(wid, Record(good, {0.1}, false, "cuda -arch=sm_90")));
  EXPECT_FALSE(db.Best(wid, kTarget).has_value()) << "unverified records never count as best";

  // The second candidate of the batch computes wrong values (the runner's
  // test hook): its record must be refused.
  rpc::LocalRunnerOptions ro;
  ro.test_faults = {rpc::TestFault::kNone, rpc::TestFault::kWrongValues};
  rpc::LocalRunner runner(ro);
  VerifyOptions o = Quick();
  o.unverified = true;
  VerifySummary s = VerifyRecords(db, runner, o);
  ASSERT_EQ(s.records.size(), 4u);
  EXPECT_EQ(s.promoted, 1);
  EXPECT_EQ(s.refused, 2);
  EXPECT_EQ(s.skipped, 1);
  auto row = [&](const std::string& trace, const std::string& target) -> const VerifiedRecord& {
    for (const VerifiedRecord& v : s.records) {
      if (v.trace_hash == HashOf(trace) && v.target == ir::Target::Parse(target).ToString()) return v;
    }
    throw std::runtime_error("no row");
  };
  EXPECT_EQ(row(good, "cuda -arch=sm_90").outcome, "skipped");
  EXPECT_NE(row(good, "cuda -arch=sm_90").message.find("CPU kernels only"), std::string::npos)
      << row(good, "cuda -arch=sm_90").message;
  EXPECT_EQ(row(good, kTarget).outcome, "promoted") << row(good, kTarget).message;
  EXPECT_EQ(row(wrong, kTarget).outcome, "refused");
  EXPECT_NE(row(wrong, kTarget).message.find("wrong_result"), std::string::npos)
      << row(wrong, kTarget).message;
  EXPECT_EQ(row(broken, kTarget).outcome, "refused");
  EXPECT_NE(row(broken, kTarget).message.find("does not replay"), std::string::npos)
      << row(broken, kTarget).message;

  // Only the promoted record is usable, with this machine's times.
  std::optional<database::TuningRecord> best = db.Best(wid, kTarget);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->trace_hash, HashOf(good));
  EXPECT_TRUE(best->verified);
  ASSERT_EQ(best->run_seconds.size(), 3u);  // the new repeats replace the imported time
  EXPECT_NE(best->median_seconds, 0.5);
  // The new measurement's load: -1 (unknown) when the run was too short for
  // the CPU counters to tick; FinalRemeasure.TheBestAreMeasuredAgainAndKeepEveryRepeat checks a long one.
  EXPECT_TRUE(best->machine_load == -1 || (best->machine_load >= 0 && best->machine_load <= 1))
      << best->machine_load;
  db.ForEachRecord([&](database::WorkloadId, const database::TuningRecord& r) {
    if (r.trace_hash == HashOf(wrong) && r.target == kTarget) {
      EXPECT_FALSE(r.verified);
      EXPECT_EQ(r.status, database::kStatusWrongResult);
    }
    if (r.trace_hash == HashOf(broken)) {
      EXPECT_FALSE(r.verified);
      EXPECT_EQ(r.status, database::kStatusBuildError);
    }
  });
  EXPECT_EQ(db.Stats().usable_records, 1);
}

TEST(VerifyRecords, OnlyTargetsThisMachineCanRun) {
  std::string why;
  EXPECT_TRUE(CanMeasureHere(kTarget, &why)) << why;
  EXPECT_FALSE(CanMeasureHere("cuda -arch=sm_90", &why));
  EXPECT_FALSE(CanMeasureHere("llvm -num-cores=100000", &why));
  EXPECT_NE(why.find("100000 cores"), std::string::npos) << why;
}

TEST(FinalRemeasure, TheBestAreMeasuredAgainAndKeepEveryRepeat) {
  const ir::Target target = ir::Target::Parse(kTarget);
  TuneContext ctx = testing::Context(Workload(), kTarget, 1, 1);
  MeasureTask task{Workload(), target, {}, 3};
  task.timing.number = 1;
  task.timing.repeat = 1;
  // Long enough for the CPU counters behind machine_load to tick (10 ms).
  task.timing.min_repeat_ms = 20;
  rpc::LocalRunner runner;
  database::Database db = database::Database::InMemory();
  TuneOptions o;
  o.trials = 6;
  o.trials_per_iter = 6;
  o.seed = 3;
  o.fingerprint = kFingerprint;
  o.final_remeasure_top = 2;
  o.final_remeasure_repeat = 4;
  TuneSummary s = Tune(ctx, runner, db, task, o);
  ASSERT_EQ(s.measured_this_run, 6) << s.stop_reason;
  // At least the best 2; more when a re-measured one fell out of the top.
  EXPECT_GE(s.remeasured, 2);
  EXPECT_EQ(s.ok_measurements, 6);
  int longer = 0, single = 0;
  db.ForEachRecord([&](database::WorkloadId, const database::TuningRecord& r) {
    ASSERT_EQ(r.status, database::kStatusOk) << r.message;
    // The noise figures are stored with every measurement.
    EXPECT_GE(r.machine_load, 0);
    EXPECT_LE(r.machine_load, 1);
    EXPECT_EQ(r.wide_spread, IsWideSpread(r.run_seconds));
    EXPECT_DOUBLE_EQ(r.median_seconds, database::Median(r.run_seconds));
    if (r.run_seconds.size() == 5u) ++longer;  // 1 repeat while tuning + 4 at the end
    if (r.run_seconds.size() == 1u) ++single;
  });
  EXPECT_EQ(longer, s.remeasured);
  EXPECT_EQ(longer + single, 6);
  // The best is one of the re-measured ones, whatever the noise did.
  EXPECT_EQ(db.Best(*db.FindWorkload(Workload()), kTarget)->run_seconds.size(), 5u);
  // The summary holds the best's median before the re-measure and after it.
  EXPECT_GT(s.best_before_remeasure_secs, 0);
  EXPECT_DOUBLE_EQ(s.best_after_remeasure_secs,
                   db.Best(*db.FindWorkload(Workload()), kTarget)->median_seconds);

  // Turned off, nothing is measured again.
  database::Database db2 = database::Database::InMemory();
  o.final_remeasure_top = 0;
  TuneSummary off = Tune(ctx, runner, db2, task, o);
  EXPECT_EQ(off.remeasured, 0);
  EXPECT_EQ(off.best_before_remeasure_secs, 0);
  EXPECT_EQ(off.best_after_remeasure_secs, 0);
  db2.ForEachRecord([&](database::WorkloadId, const database::TuningRecord& r) {
    EXPECT_EQ(r.run_seconds.size(), 1u);
  });
}

#endif  // KILN_HAVE_RUNNER

TEST(Remeasure, FoldsANewMeasurementIntoTheRecord) {
  database::TuningRecord stored;
  stored.run_seconds = {1.0, 1.0};
  stored.verified = true;
  stored.machine_load = 0.5;
  MeasureResult r;
  r.status = MeasureStatus::kOk;
  r.verified = true;
  r.run_secs = {2.0, 2.0, 2.0};
  r.machine_load = 0.1;
  database::TuningRecord kept = WithRemeasure(stored, r, true);
  EXPECT_EQ(kept.run_seconds, (std::vector<double>{1, 1, 2, 2, 2}));
  EXPECT_DOUBLE_EQ(kept.median_seconds, 2);
  EXPECT_DOUBLE_EQ(kept.machine_load, 0.5);  // the busier of the two
  EXPECT_TRUE(kept.wide_spread);
  database::TuningRecord replaced = WithRemeasure(stored, r, false);
  EXPECT_EQ(replaced.run_seconds, (std::vector<double>{2, 2, 2}));
  EXPECT_DOUBLE_EQ(replaced.machine_load, 0.1);
  EXPECT_FALSE(replaced.wide_spread);
  r.status = MeasureStatus::kRunCrash;
  r.message = "boom";
  database::TuningRecord failed = WithRemeasure(stored, r, true);
  EXPECT_FALSE(failed.verified);
  EXPECT_EQ(failed.status, database::kStatusRunCrash);
  EXPECT_EQ(failed.run_seconds, stored.run_seconds);
  EXPECT_NE(failed.message.find("boom"), std::string::npos);
}

TEST(Remeasure, WideSpread) {
  EXPECT_FALSE(IsWideSpread({}));
  EXPECT_FALSE(IsWideSpread({1.0}));
  EXPECT_FALSE(IsWideSpread({1.0, 1.05, 1.09}));
  EXPECT_TRUE(IsWideSpread({1.0, 1.2}));
}

}  // namespace
}  // namespace kiln::search
