// kiln report's pieces: curve points from records, histogram bins, status
// windows, HTML escaping of user text (trace scripts, messages), peer
// figures in the database and the page built from a real database.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <string>

#include "database/database.h"
#include "ir/flops.h"
#include "ir/workloads/suite.h"
#include "report/curve.h"
#include "report/histogram.h"
#include "report/html_escape.h"
#include "report/report_data.h"
#include "report/report_page.h"
#include "report/status_timeline.h"
#include "report/svg_chart.h"
#include "report/workload_names.h"
#include "tests/database/schema_v3.h"

namespace {

using kiln::database::TuningRecord;
namespace report = kiln::report;

TuningRecord Rec(const std::string& status, double seconds, uint64_t seed, bool verified = true,
                 const std::string& job = "") {
  TuningRecord r;
  r.status = status;
  r.median_seconds = status == "ok" ? seconds : 0;
  if (status == "ok") r.run_seconds = {seconds};
  r.verified = verified;
  r.provenance.seed = seed;
  r.provenance.job_id = job;
  r.provenance.timestamp = 1000;
  return r;
}

TEST(ReportCurve, OneStepLinePerRunCountingFailuresAsTrials) {
  // 1e9 FLOP: GFLOP/s = 1 / seconds.
  std::vector<TuningRecord> records = {
      Rec("build_error", 0, 1), Rec("ok", 2.0, 1),
      Rec("ok", 1.0, 2),        Rec("ok", 0.1, 1, false),  // unverified: never a best
      Rec("ok", 0.5, 1),        Rec("ok", 4.0, 1)};
  auto runs = report::TuningCurves(records, 1e9);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].label, "seed 1");
  EXPECT_EQ(runs[0].trials, 5);
  EXPECT_EQ(runs[0].usable, 3);
  ASSERT_EQ(runs[0].points.size(), 3u);
  EXPECT_EQ(runs[0].points[0].trial, 2);
  EXPECT_DOUBLE_EQ(runs[0].points[0].best_gflops, 0.5);
  EXPECT_EQ(runs[0].points[1].trial, 4);
  EXPECT_DOUBLE_EQ(runs[0].points[1].best_gflops, 2.0);
  EXPECT_EQ(runs[0].points[2].trial, 5);  // the line runs on to the last trial
  EXPECT_DOUBLE_EQ(runs[0].points[2].best_gflops, 2.0);
  EXPECT_DOUBLE_EQ(runs[0].best_seconds, 0.5);
  EXPECT_EQ(runs[1].label, "seed 2");
  ASSERT_EQ(runs[1].points.size(), 1u);
  EXPECT_EQ(runs[1].points[0].trial, 1);
  EXPECT_DOUBLE_EQ(runs[1].points[0].best_gflops, 1.0);
}

TEST(ReportCurve, RunsAreKeyedByJobAndSeed) {
  auto runs = report::TuningCurves(
      {Rec("ok", 1, 7, true, "3"), Rec("ok", 1, 7, true, ""), Rec("timeout", 0, 7, true, "3")},
      1e9);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].label, "job 3 \u00b7 seed 7");
  EXPECT_EQ(runs[0].trials, 2);
  EXPECT_EQ(runs[1].trials, 1);
  // A run with no usable record has no line.
  auto none = report::TuningCurves({Rec("run_crash", 0, 1)}, 1e9);
  ASSERT_EQ(none.size(), 1u);
  EXPECT_TRUE(none[0].points.empty());
}

TEST(ReportHistogram, LinearBinsIncludeTheTopEdge) {
  auto h = report::MakeHistogram({1, 2, 3, 4, -1, NAN, INFINITY}, 3);
  EXPECT_FALSE(h.log_scale);
  ASSERT_EQ(h.edges.size(), 4u);
  EXPECT_DOUBLE_EQ(h.edges[0], 1);
  EXPECT_DOUBLE_EQ(h.edges[3], 4);
  EXPECT_EQ(h.counts, (std::vector<int64_t>{1, 1, 2}));
  EXPECT_EQ(h.total(), 4);
}

TEST(ReportHistogram, WideSpreadsGetLogBins) {
  auto h = report::MakeHistogram({1e-3, 2e-3, 0.5}, 2);
  EXPECT_TRUE(h.log_scale);
  ASSERT_EQ(h.edges.size(), 3u);
  EXPECT_NEAR(h.edges[1], std::sqrt(1e-3 * 0.5), 1e-9);
  EXPECT_EQ(h.counts, (std::vector<int64_t>{2, 1}));
}

TEST(ReportHistogram, EqualValuesAndNoValues) {
  auto h = report::MakeHistogram({0.25, 0.25}, 10);
  ASSERT_EQ(h.counts.size(), 1u);
  EXPECT_EQ(h.counts[0], 2);
  EXPECT_LT(h.edges[0], 0.25);
  EXPECT_GT(h.edges[1], 0.25);
  EXPECT_TRUE(report::MakeHistogram({}, 10).counts.empty());
}

TEST(ReportStatusTimeline, WindowsOfConsecutiveTrials) {
  std::vector<TuningRecord> r;
  for (int i = 0; i < 10; ++i) r.push_back(Rec(i % 3 == 0 ? "build_error" : "ok", 1, 1));
  auto w = report::StatusTimeline(r, 4);  // windows of 3: 1-3, 4-6, 7-9, 10
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w[0].first_trial, 1);
  EXPECT_EQ(w[0].last_trial, 3);
  EXPECT_EQ(w[0].by_status["build_error"], 1);
  EXPECT_EQ(w[0].by_status["ok"], 2);
  EXPECT_EQ(w[3].first_trial, 10);
  EXPECT_EQ(w[3].by_status["build_error"], 1);
  EXPECT_EQ(report::StatusesIn(w), (std::vector<std::string>{"ok", "build_error"}));
}

TEST(ReportHtml, EscapesMarkupQuotesAndBadBytes) {
  EXPECT_EQ(report::HtmlEscape("<script>alert(\"x\")</script> & 'q'"),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;");
  EXPECT_EQ(report::HtmlEscape("T.grid(4, 8)\n\tok \u00b5s"), "T.grid(4, 8)\n\tok \u00b5s");
  EXPECT_EQ(report::HtmlEscape(std::string("a\xff"
                                           "b\x01"
                                           "c",
                                           5)),
            "a\uFFFDb\uFFFDc");
  EXPECT_EQ(report::HtmlEscape(std::string("\xe2\x82", 2)), "\uFFFD\uFFFD");  // a cut-off sequence
}

TEST(ReportSvg, TicksAndNumbers) {
  EXPECT_EQ(report::NiceTicks(0, 10, 5), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(report::NiceTicks(0, 0.9, 3), (std::vector<double>{0, 0.5}));
  EXPECT_EQ(report::FormatSeconds(0.00123), "1.23 ms");
  EXPECT_EQ(report::FormatSeconds(2.5e-6), "2.5 \u00b5s");
  EXPECT_EQ(report::FormatNumber(123.4), "123");
  EXPECT_EQ(report::GflopsText(12.345), "12.35");
}

class ReportDb : public testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::TempDir() + "kiln_report_" + std::to_string(getpid()) + ".db";
    Clean();
  }
  void TearDown() override { Clean(); }
  void Clean() {
    for (const char* s : {"", "-wal", "-shm"}) std::remove((path_ + s).c_str());
  }
  std::string path_;
};

TEST_F(ReportDb, PeerFiguresAreStoredReplacedAndChecked) {
  using namespace kiln::database;
  Database db = Database::Open(path_);
  WorkloadId w = db.CommitWorkload(kiln::ir::MakeWorkload("GMM", 0));
  db.SetPeer(w, {"llvm -num-cores=1 -mcpu=znver4", "openblas", 0.002, "sgemm", 5});
  db.SetPeer(w, {"llvm -mcpu=znver4 -num-cores=1", "openblas", 0.001, "again",
                 6});  // same target, normalized
  db.SetPeer(w, {"llvm -mcpu=znver3", "tvm", 0.003, "", 7});
  auto all = db.Peers(w);
  ASSERT_EQ(all.size(), 2u);
  auto one = db.Peers(w, "llvm -num-cores=1 -mcpu=znver4");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].name, "openblas");
  EXPECT_DOUBLE_EQ(one[0].seconds, 0.001);
  EXPECT_EQ(one[0].note, "again");
  EXPECT_THROW(db.SetPeer(w, {"llvm", "", 1.0, "", 0}), DatabaseError);
  EXPECT_THROW(db.SetPeer(w, {"llvm", "x", 0.0, "", 0}), DatabaseError);
  EXPECT_THROW(db.SetPeer(w, {"llvm", "x", NAN, "", 0}), DatabaseError);
}

TEST_F(ReportDb, AVersion2FileOpenedReadOnlyHasNoPeers) {
  using namespace kiln::database;
  WorkloadId w;
  {
    Database db = Database::Open(path_);
    w = db.CommitWorkload(kiln::ir::MakeWorkload("GMM", 0));
  }
  sqlite3* s = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &s), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(s, (std::string(kiln::database::testing::kDropVersion3) + "PRAGMA user_version = 2;").c_str(),
                   nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(s);
  {
    Database db = Database::Open(path_, Database::Mode::kReadOnly);
    EXPECT_TRUE(db.Peers(w).empty());
  }
  // Opened read-write it migrates and can store one.
  Database db = Database::Open(path_);
  db.SetPeer(w, {"llvm", "x", 1.0, "", 0});
  EXPECT_EQ(db.Peers(w).size(), 1u);
}

TEST_F(ReportDb, PageFromADatabaseEscapesUserTextAndShowsTheNumbers) {
  using namespace kiln::database;
  Database db = Database::Open(path_);
  const kiln::ir::PrimFunc gmm = kiln::ir::MakeWorkload("GMM", 0);
  const double flops = kiln::ir::EstimateFlops(gmm);
  WorkloadId w = db.CommitWorkload(gmm);
  TuningRecord r;
  r.target = "llvm -mcpu=znver4";
  r.trace_json = "[[],[]]";  // the empty trace: the unscheduled program
  r.run_seconds = {0.004};
  r.verified = true;
  r.provenance.seed = 3;
  r.provenance.timestamp = 1700000000;
  db.CommitRecord(w, r);
  TuningRecord bad = r;
  bad.trace_json = "[[[\"GetBlock\",[],[\"C\",\"main\"],[\"b0\"]]],[]]";
  bad.status = "build_error";
  bad.run_seconds.clear();
  bad.verified = false;
  bad.message = "</code></pre><script>alert(1)</script>";
  db.CommitRecord(w, bad);
  db.SetPeer(w, {"llvm -mcpu=znver4", "vendor <lib>", 0.008, "", 0});

  report::ReportFilter f;
  auto sections = report::CollectSections(db, f);
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_EQ(sections[0].name, "GMM:0");  // named from the suite by its hash
  ASSERT_TRUE(sections[0].best.has_value());
  EXPECT_TRUE(sections[0].best->error.empty()) << sections[0].best->error;
  EXPECT_NE(sections[0].best->program.find("T.prim_func"), std::string::npos);
  const std::string html = report::ReportHtml(sections, {"my <db>", "every record", ""});
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)"), std::string::npos);
  EXPECT_NE(html.find("my &lt;db&gt;"), std::string::npos);
  EXPECT_NE(html.find(report::GflopsText(flops / 0.004 / 1e9)), std::string::npos);
  EXPECT_NE(html.find("vendor &lt;lib&gt;"), std::string::npos);
  EXPECT_NE(html.find("2.00\u00d7"), std::string::npos);  // the peer takes twice as long
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("http://", html.find("<body")),
            html.find("http://www.w3.org/2000/svg", html.find("<body")))
      << "the page fetches nothing";
  const std::string svg = report::CurveSvg(sections[0]);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("seed 3"), std::string::npos);

  // Filters: another target, or a job that has no records, select nothing.
  f.target = "llvm -mcpu=znver3";
  EXPECT_TRUE(report::CollectSections(db, f).empty());
  f.target.clear();
  f.job_id = "9";
  EXPECT_TRUE(report::CollectSections(db, f).empty());
}

// A workload no suite or job names is shown by its buffers, the outputs
// (what its blocks write) after the arrow; a hash the database does not hold
// keeps the hash.
TEST_F(ReportDb, AnUnnamedWorkloadIsLabelledByItsBuffers) {
  using namespace kiln::database;
  const kiln::ir::PrimFunc mm = kiln::ir::Matmul(24, 40, 8);
  EXPECT_EQ(report::BufferSignature(mm), "A[24,8], B[8,40] -> C[24,40]");
  Database db = Database::Open(path_);
  const WorkloadId w = db.CommitWorkload(mm);
  const std::map<std::string, std::string> known = report::KnownWorkloadNames(db);
  EXPECT_EQ(report::WorkloadLabel(db, known, db.WorkloadHash(w)), "A[24,8], B[8,40] -> C[24,40]");
  EXPECT_EQ(report::WorkloadLabel(db, known, "0123456789abcdef0123"), "workload 0123456789abcdef");
  const std::string gmm = db.WorkloadHash(db.CommitWorkload(kiln::ir::MakeWorkload("GMM", 0)));
  EXPECT_EQ(report::WorkloadLabel(db, known, gmm), "GMM:0");

  TuningRecord r = Rec("ok", 0.001, 1);
  r.target = "llvm";
  r.trace_json = "[[],[]]";
  db.CommitRecord(w, r);
  auto sections = report::CollectSections(db, report::ReportFilter{});
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_EQ(sections[0].name, "A[24,8], B[8,40] -> C[24,40]");
}

}  // namespace
