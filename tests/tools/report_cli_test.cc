// kiln report, kiln db peer and kiln config check through the built binary;
// and the report page opened in a real browser (Debian's headless Chromium):
// it renders, it shows the best GFLOP/s the database holds, and its
// screenshot has the tuning curve drawn in it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "database/database.h"
#include "ir/flops.h"
#include "ir/workloads/suite.h"
#include "report/report_page.h"
#include "tests/common/run_kiln.h"

namespace {

namespace fs = std::filesystem;
using kiln::testing::RunKiln;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Output of a shell command (stdout only) and its exit code.
std::pair<int, std::string> Shell(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return {-1, ""};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

class ReportCli : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(testing::TempDir()) / ("kiln_report_cli_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "tuned.db").string();
  }
  void TearDown() override {
    if (std::getenv("KILN_KEEP_REPORT") == nullptr) fs::remove_all(dir_);
  }
  std::string P(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
  std::string db_;
};

TEST_F(ReportCli, HelpAndClearErrors) {
  for (const char* sub : {"report", "db peer add", "db peer list", "config check"}) {
    auto r = RunKiln(std::string(sub) + " --help");
    EXPECT_EQ(r.code, 0) << sub << ": " << r.out;
  }
  auto missing = RunKiln("report --db " + P("nope.db") + " -o " + P("x.html"));
  EXPECT_NE(missing.code, 0);
  EXPECT_NE(missing.out.find("no such file"), std::string::npos) << missing.out;
  { kiln::database::Database::Open(db_); }
  auto empty = RunKiln("report --db " + db_ + " -o " + P("x.html"));
  EXPECT_NE(empty.code, 0);
  EXPECT_NE(empty.out.find("no records"), std::string::npos) << empty.out;
  auto no_output = RunKiln("report --db " + db_);
  EXPECT_NE(no_output.code, 0);
  EXPECT_NE(no_output.out.find("-o"), std::string::npos) << no_output.out;
}

TEST_F(ReportCli, ConfigCheckNamesFileLineAndField) {
  const std::string root = KILN_SOURCE_DIR;
  auto ok = RunKiln("config check " + root + "/configs/targets/*.json " + root +
                    "/configs/search/*.json " + root + "/configs/jobs/*.json");
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_NE(ok.out.find("h200.json: ok"), std::string::npos) << ok.out;
  fs::create_directories(dir_ / "targets");
  std::ofstream(dir_ / "targets" / "mine.json")
      << "{\n  \"target\": \"llvm\",\n  \"corez\": 2\n}\n";
  auto bad = RunKiln("config check " + P("targets/mine.json"));
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.out.find("targets/mine.json:3: field 'corez'"), std::string::npos) << bad.out;
  auto tune =
      RunKiln("tune -w GMM:0 --target-preset " + P("targets/mine.json") + " --db " + P("t.db"));
  EXPECT_NE(tune.code, 0);
  EXPECT_NE(tune.out.find("corez"), std::string::npos) << tune.out;
  auto unknown = RunKiln("tune -w GMM:0 --search-preset blazing --db " + P("t.db"));
  EXPECT_NE(unknown.code, 0);
  EXPECT_NE(unknown.out.find("thorough"), std::string::npos)
      << unknown.out;  // lists the known ones
}

#ifdef KILN_HAVE_RUNNER
TEST_F(ReportCli, ATunedDatabaseGivesAPageABrowserRenders) {
  // A small tuning run: the quick search preset, with the timing cut down.
  auto tune = RunKiln(
      "tune -w GMM:0 --search-preset quick --trials 8 --trials-per-iter 8 --number 1 "
      "--min-repeat-ms 1 --target 'llvm -num-cores=1' --db " +
      db_);
  ASSERT_EQ(tune.code, 0) << tune.out;
  auto peer = RunKiln("db peer add --db " + db_ +
                      " -w GMM:0 --target 'llvm -num-cores=1' --name reference "
                      "--seconds 0.01 --note 'made up for the test'");
  ASSERT_EQ(peer.code, 0) << peer.out;

  const kiln::ir::PrimFunc gmm = kiln::ir::MakeWorkload("GMM", 0);
  std::string best_text;
  {
    auto db = kiln::database::Database::Open(db_, kiln::database::Database::Mode::kReadOnly);
    EXPECT_EQ(db.Size(), 8);
    auto best = db.Best(*db.FindWorkload(gmm), "llvm -num-cores=1");
    ASSERT_TRUE(best.has_value());
    best_text = kiln::report::GflopsText(kiln::ir::EstimateFlops(gmm) / best->median_seconds / 1e9);
  }

  const std::string html = P("report.html");
  auto r = RunKiln("report --db " + db_ + " -o " + html + " --svg " + P("curve.svg"));
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string page = Slurp(html);
  EXPECT_NE(page.find("GMM:0"), std::string::npos);
  EXPECT_NE(page.find("Tuning curve"), std::string::npos);
  EXPECT_NE(page.find(best_text), std::string::npos) << best_text;
  EXPECT_NE(page.find("vs reference"), std::string::npos);
  const std::string svg = Slurp(P("curve.svg"));
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<path"), std::string::npos);
  // Filters: one workload and target give the same section; a job id none of
  // these records carries gives none.
  EXPECT_EQ(
      RunKiln("report --db " + db_ + " -w GMM:0 --target 'llvm -num-cores=1' -o " + P("one.html"))
          .code,
      0);
  EXPECT_NE(RunKiln("report --db " + db_ + " --job 42 -o " + P("job.html")).code, 0);

  // The browser.
  if (Shell("command -v chromium").first != 0) {
    GTEST_SKIP()
        << "chromium is not installed (scripts/install_deps.sh installs it): the page was checked "
           "as text only, not rendered in a browser";
  }
  const std::string flags =
      "timeout 180 chromium --headless --disable-gpu --no-sandbox --hide-scrollbars "
      "--user-data-dir=" +
      P("chromium-profile") + " ";
  auto [dom_code, dom] = Shell(flags + "--dump-dom file://" + html + " 2>/dev/null");
  ASSERT_EQ(dom_code, 0) << "chromium --dump-dom failed";
  EXPECT_NE(dom.find("Kiln tuning report"), std::string::npos) << dom.substr(0, 2000);
  // The best GFLOP/s card, as the browser parsed it.
  const size_t card = dom.find("id=\"best-gflops-1\"");
  ASSERT_NE(card, std::string::npos);
  EXPECT_NE(dom.substr(card, 300).find(">" + best_text + "<"), std::string::npos)
      << dom.substr(card, 300);
  EXPECT_NE(dom.find("<svg"), std::string::npos);

  const std::string png = P("report.png");
  auto shot = Shell(flags + "--window-size=1280,1400 --screenshot=" + png + " file://" + html +
                    " 2>/dev/null");
  ASSERT_EQ(shot.first, 0) << "chromium --screenshot failed";
  ASSERT_TRUE(fs::exists(png));
  if (Shell("command -v python3").first != 0)
    GTEST_SKIP() << "python3 is absent: the screenshot's pixels are not checked";
  // width height nonwhite distinct_colors pixels_of_the_curve_color (#2563eb)
  auto [stats_code, stats] = Shell("python3 " + std::string(KILN_SOURCE_DIR) +
                                   "/tests/tools/png_stats.py " + png + " 2563eb");
  ASSERT_EQ(stats_code, 0) << stats;
  std::istringstream in(stats);
  int width = 0, height = 0, colors = 0, curve = 0;
  double nonwhite = 0;
  in >> width >> height >> nonwhite >> colors >> curve;
  EXPECT_EQ(width, 1280) << stats;
  EXPECT_EQ(height, 1400) << stats;
  EXPECT_GT(nonwhite, 0.02) << "the page looks blank: " << stats;
  EXPECT_GT(colors, 50) << stats;
  EXPECT_GT(curve, 200) << "no tuning curve (nor the blue best figure) drawn: " << stats;
}
#endif

}  // namespace
