// Finding records by target (search/target_lookup.h): canonical spellings
// match, `compatible` accepts a subset-feature CPU with the same core count
// and says so, and stored targets are rewritten without losing or doubling a
// record.
#include "search/target_lookup.h"

#include <gtest/gtest.h>

#include "codegen/target_features.h"
#include "ir/workloads/suite.h"

namespace kiln::search {
namespace {

using database::Database;
using database::TuningRecord;

TuningRecord Rec(const std::string& target, int i, double secs, const std::string& fp = "fp") {
  TuningRecord r;
  r.target = target;
  r.fingerprint = fp;
  r.trace_json = "{\"insts\": [" + std::to_string(i) + "]}";
  r.run_seconds = {secs};
  r.status = "ok";
  r.verified = true;
  r.args = {{"float32", {128, 128}}};
  r.provenance = {"host-a", "0.1.0", 7, "job-1", 1700000000, "", {}};
  return r;
}

ir::Target T(const std::string& s) { return ir::Target::Parse(s); }

// What `kiln tune --target host` stored before targets were canonical: every
// feature of the CPU, and the triple.
std::string LongForm(const std::string& cpu, int cores) {
  std::string mattr;
  for (const std::string& f : codegen::EnabledFeatures(T("llvm -mcpu=" + cpu)))
    mattr += (mattr.empty() ? "+" : ",+") + f;
  return "llvm -mattr=" + mattr + " -mcpu=" + cpu + " -mtriple=x86_64-pc-linux-gnu -num-cores=" +
         std::to_string(cores);
}

class TargetLookupTest : public ::testing::Test {
 protected:
  Database db = Database::InMemory();
  database::WorkloadId w = db.CommitWorkload(ir::MakeWorkload("GMM", 0));
};

TEST_F(TargetLookupTest, SubsetFeatureRecordHitsOnlyWhenCompatibleIsAsked) {
  db.CommitRecord(w, Rec("llvm -mcpu=haswell -num-cores=2", 1, 2e-3));
  const ir::Target skx = T("llvm -mcpu=skylake-avx512 -num-cores=2");
  TargetLookup exact = FindBestRecord(db, w, skx, TargetMatch::kExact);
  EXPECT_FALSE(exact.record);
  EXPECT_EQ(exact.miss.records_this_target, 0);

  TargetLookup compat = FindBestRecord(db, w, skx, TargetMatch::kCompatible);
  ASSERT_TRUE(compat.record);
  EXPECT_FALSE(compat.exact);
  EXPECT_EQ(compat.record_target, "llvm -mcpu=haswell -num-cores=2");
  EXPECT_NE(compat.note.find("haswell"), std::string::npos) << compat.note;
}

TEST_F(TargetLookupTest, SupersetFeaturesOrOtherCoreCountsDoNotHit) {
  db.CommitRecord(w, Rec("llvm -mcpu=skylake-avx512 -num-cores=2", 1, 1e-3));
  db.CommitRecord(w, Rec("llvm -mcpu=haswell -num-cores=4", 2, 1e-3));
  TargetLookup r = FindBestRecord(db, w, T("llvm -mcpu=haswell -num-cores=2"), TargetMatch::kCompatible);
  EXPECT_FALSE(r.record);
  ASSERT_EQ(r.refused.size(), 2u);
  EXPECT_NE(r.refused[0].find("core"), std::string::npos) << r.refused[0];
  EXPECT_NE(r.refused[1].find("avx512"), std::string::npos) << r.refused[1];
}

TEST_F(TargetLookupTest, ExactMatchIsPreferredOverAFasterCompatibleOne) {
  db.CommitRecord(w, Rec("llvm -mcpu=haswell -num-cores=2", 1, 1e-3));
  db.CommitRecord(w, Rec("llvm -mcpu=skylake-avx512 -num-cores=2", 2, 5e-3));
  TargetLookup r = FindBestRecord(db, w, T("llvm -mcpu=skylake-avx512 -num-cores=2"),
                                  TargetMatch::kCompatible);
  ASSERT_TRUE(r.record);
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.record->median_seconds, 5e-3);
  EXPECT_TRUE(r.note.empty());
}

TEST_F(TargetLookupTest, OldLongFormIsFoundThenRewrittenWithoutDoubling) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the long form names an x86-64 triple";
#endif
  const std::string old_form = LongForm("znver3", 2);
  const std::string short_form = "llvm -mcpu=znver3 -num-cores=2";
  db.CommitRecord(w, Rec(old_form, 1, 3e-3, "fp-a"));
  db.CommitRecord(w, Rec(old_form, 2, 2e-3, "fp-a"));
  // The same machine and trace under the short spelling, plus a new trace.
  db.CommitRecord(w, Rec(short_form, 2, 2e-3, "fp-a"));
  db.CommitRecord(w, Rec(short_form, 3, 4e-3, "fp-b"));

  TargetLookup r = FindBestRecord(db, w, T(short_form));
  ASSERT_TRUE(r.record) << r.miss.Explain();
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.record->median_seconds, 2e-3);
  EXPECT_EQ(r.miss.records_this_target, 4);
  EXPECT_EQ(StoredSpellings(db, w, T(short_form)).size(), 2u);

  EXPECT_EQ(CanonicalizeStoredTargets(db), 1);
  EXPECT_EQ(db.Targets(), std::vector<std::string>{short_form});
  EXPECT_EQ(db.CountRecords(w, short_form), 3) << "trace 2 of fp-a was stored under both spellings";
  EXPECT_EQ(db.Size(), 3);
  EXPECT_EQ(CanonicalizeStoredTargets(db), 0) << "a second pass has nothing to do";
  EXPECT_EQ(db.IntegrityCheck(), "ok");
}

TEST_F(TargetLookupTest, UnparsableStoredTargetsAreSkipped) {
  db.CommitRecord(w, Rec("llvm -mcpu=notacpu -num-cores=2", 1, 1e-3));
  TargetLookup r = FindBestRecord(db, w, T("llvm -mcpu=haswell -num-cores=2"), TargetMatch::kCompatible);
  EXPECT_FALSE(r.record);
  ASSERT_EQ(r.refused.size(), 1u);
  EXPECT_NE(r.refused[0].find("does not know the CPU 'notacpu'"), std::string::npos) << r.refused[0];
  EXPECT_EQ(CanonicalizeStoredTargets(db), 0);
  EXPECT_THROW(ParseTargetMatch("fuzzy"), std::invalid_argument);
}

}  // namespace
}  // namespace kiln::search
