#include "report/report_page.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>

#include "report/histogram.h"
#include "report/html_escape.h"
#include "report/status_timeline.h"
#include "report/svg_chart.h"

namespace kiln::report {
namespace {

constexpr const char* kStyle = R"css(
:root{--fg:#0f172a;--muted:#64748b;--line:#e2e8f0;--card:#f8fafc;--accent:#2563eb}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:#fff}
main{max-width:1080px;margin:0 auto;padding:28px 28px 60px}
h1{font-size:26px;margin:0 0 4px}
h2{font-size:21px;margin:0}
h3{font-size:16px;margin:26px 0 8px;color:#1e293b}
.meta,.note{color:var(--muted);font-size:13px}
.meta code{font-size:12.5px}
table{border-collapse:collapse;width:100%;font-size:14px;margin:8px 0}
th,td{text-align:left;padding:6px 10px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600;color:#334155;background:var(--card)}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
a{color:var(--accent);text-decoration:none}
section.workload{border-top:3px solid var(--fg);margin-top:40px;padding-top:18px}
.head{display:flex;flex-wrap:wrap;align-items:baseline;gap:8px 16px}
.hash{font:12px ui-monospace,"DejaVu Sans Mono",monospace;color:var(--muted)}
.target{font:13px ui-monospace,"DejaVu Sans Mono",monospace;background:var(--card);border:1px solid var(--line);border-radius:4px;padding:1px 6px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:12px;margin:16px 0 4px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 14px}
.card .label{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
.card .value{font-size:24px;font-weight:650;font-variant-numeric:tabular-nums}
.card .sub{font-size:12px;color:var(--muted)}
.card.primary .value{color:var(--accent)}
svg.chart{width:100%;height:auto;display:block;border:1px solid var(--line);border-radius:6px}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:16px}
@media (max-width:900px){.pair{grid-template-columns:1fr}}
pre{background:#0f172a;color:#e2e8f0;padding:12px 14px;border-radius:6px;overflow:auto;font:12.5px/1.45 ui-monospace,"DejaVu Sans Mono",monospace;max-height:520px}
details{margin:8px 0}
summary{cursor:pointer;font-weight:600}
.err{color:#b91c1c}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px;vertical-align:baseline}
)css";

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string TimeText(int64_t unix_seconds) {
  if (unix_seconds <= 0) return "unknown time";
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

std::string Card(const std::string& label, const std::string& value, const std::string& sub,
                 const std::string& extra_class = "", const std::string& id = "") {
  return "<div class=\"card" + (extra_class.empty() ? "" : " " + extra_class) + "\"" +
         (id.empty() ? "" : " id=\"" + HtmlEscape(id) + "\"") + "><div class=\"label\">" +
         HtmlEscape(label) + "</div><div class=\"value\">" + HtmlEscape(value) +
         "</div><div class=\"sub\">" + HtmlEscape(sub) + "</div></div>";
}

// Peer ratio: how many times faster the tuned best is than the peer.
std::string RatioText(const database::PeerFigure& p, double best_seconds) {
  return Fixed(p.seconds / best_seconds, 2) + "\u00d7";
}

int64_t CountUsable(const WorkloadSection& s) {
  int64_t n = 0;
  for (const auto& r : s.records) n += IsUsable(r) ? 1 : 0;
  return n;
}

std::string Anchor(const WorkloadSection& s, size_t i) {
  return "w" + std::to_string(i + 1) + "-" + s.hash.substr(0, 12);
}

std::string Section(const WorkloadSection& s, size_t i) {
  std::string h = "<section class=\"workload\" id=\"" + HtmlEscape(Anchor(s, i)) + "\">";
  h += "<div class=\"head\"><h2>" + HtmlEscape(s.name) + "</h2><span class=\"target\">" +
       HtmlEscape(s.target) + "</span><span class=\"hash\">" + HtmlEscape(s.hash) + "</span></div>";
  h += "<p class=\"meta\">" + HtmlEscape(FormatNumber(s.flops / 1e6)) + " MFLOP per call \u00b7 " +
       std::to_string(s.runs.size()) + (s.runs.size() == 1 ? " run" : " runs") + " \u00b7 " +
       HtmlEscape(TimeText(s.records.front().provenance.timestamp)) + " to " +
       HtmlEscape(TimeText(s.records.back().provenance.timestamp)) + "</p>";

  const int64_t usable = CountUsable(s);
  h += "<div class=\"cards\">";
  if (s.best) {
    const double secs = s.best->record.median_seconds;
    h += Card("best GFLOP/s", GflopsText(Gflops(s.flops, secs)), "median of its repeats", "primary",
              "best-gflops-" + std::to_string(i + 1));
    h += Card("best latency", FormatSeconds(secs),
              "trace " + s.best->record.trace_hash.substr(0, 12));
  } else {
    h += Card("best GFLOP/s", "\u2013", "no verified ok record", "primary");
  }
  h +=
      Card("trials", std::to_string(s.records.size()), std::to_string(usable) + " ok and verified");
  h += Card("failures", std::to_string(static_cast<int64_t>(s.records.size()) - usable),
            s.records.empty()
                ? ""
                : Fixed(100.0 * (s.records.size() - usable) / s.records.size(), 1) + "% of trials");
  for (const database::PeerFigure& p : s.peers) {
    if (s.best) {
      h += Card("vs " + p.name, RatioText(p, s.best->record.median_seconds),
                "peer " + FormatSeconds(p.seconds) +
                    (p.seconds > s.best->record.median_seconds ? ": Kiln faster" : ": peer faster"),
                "", "peer-ratio-" + std::to_string(i + 1));
    }
  }
  h += "</div>";

  h += "<h3>Tuning curve</h3>" + CurveSvg(s);
  h += "<p class=\"note\">Best GFLOP/s among ok, verified records up to each trial; one line per "
       "run "
       "(records with the same job id and seed, in commit order).</p>";

  // Runs table.
  h += "<table><tr><th>run</th><th class=\"num\">trials</th><th class=\"num\">ok</th>"
       "<th class=\"num\">best GFLOP/s</th><th class=\"num\">best "
       "latency</th><th>from</th><th>to</th></tr>";
  for (size_t k = 0; k < s.runs.size(); ++k) {
    const CurveRun& r = s.runs[k];
    h += "<tr><td><span class=\"swatch\" style=\"background:" + SeriesColor(k) + "\"></span>" +
         HtmlEscape(r.label) + "</td><td class=\"num\">" + std::to_string(r.trials) +
         "</td><td class=\"num\">" + std::to_string(r.usable) + "</td><td class=\"num\">" +
         (r.usable > 0 ? GflopsText(r.best_gflops) : "\u2013") + "</td><td class=\"num\">" +
         (r.usable > 0 ? HtmlEscape(FormatSeconds(r.best_seconds)) : "\u2013") + "</td><td>" +
         HtmlEscape(TimeText(r.first_timestamp)) + "</td><td>" +
         HtmlEscape(TimeText(r.last_timestamp)) + "</td></tr>";
  }
  h += "</table>";

  std::vector<double> latencies;
  for (const auto& r : s.records) {
    if (IsUsable(r)) latencies.push_back(r.median_seconds);
  }
  const std::vector<StatusWindow> windows = StatusTimeline(s.records, 24);
  h += "<div class=\"pair\"><div><h3>Measured latencies</h3>" +
       HistogramSvg(MakeHistogram(latencies, 24), "Histogram of measured latencies", 520, 260) +
       "</div><div><h3>Outcomes over the trials</h3>" +
       StatusBarsSvg(windows, "Record status by window of trials", 520, 260) + "</div></div>";

  // Failures by kind, with one message each so that a reader sees why.
  std::map<std::string, std::pair<int64_t, std::string>> failures;
  for (const auto& r : s.records) {
    if (r.status == database::kStatusOk && r.verified) continue;
    const std::string kind = r.status == database::kStatusOk ? "ok, not verified" : r.status;
    auto& [count, message] = failures[kind];
    ++count;
    if (message.empty()) message = r.message;
  }
  if (!failures.empty()) {
    h += "<table><tr><th>failure</th><th class=\"num\">records</th><th>first message</th></tr>";
    for (const auto& [kind, cm] : failures) {
      std::string msg = cm.second.size() > 300 ? cm.second.substr(0, 300) + "\u2026" : cm.second;
      h += "<tr><td><span class=\"swatch\" style=\"background:" + StatusColor(kind) + "\"></span>" +
           HtmlEscape(kind) + "</td><td class=\"num\">" + std::to_string(cm.first) +
           "</td><td><code>" + HtmlEscape(msg) + "</code></td></tr>";
    }
    h += "</table>";
  }

  h += "<h3>Best schedule</h3>";
  if (!s.best) {
    h += "<p class=\"note\">No ok and verified record yet.</p>";
  } else {
    const database::TuningRecord& b = s.best->record;
    h += "<p class=\"meta\">trace " + HtmlEscape(b.trace_hash) + " \u00b7 " +
         HtmlEscape(RunLabel({b.provenance.job_id, b.provenance.seed})) + " \u00b7 measured on " +
         HtmlEscape(b.provenance.host.empty() ? "?" : b.provenance.host) + ", " +
         HtmlEscape(TimeText(b.provenance.timestamp)) + " \u00b7 " +
         std::to_string(b.run_seconds.size()) +
         (b.run_seconds.size() == 1 ? " repeat</p>" : " repeats</p>");
    h += "<details open><summary>Schedule (trace)</summary><pre>" +
         HtmlEscape(s.best->trace_script) + "</pre></details>";
    if (!s.best->error.empty()) {
      h += "<p class=\"err\">The trace does not replay on the stored workload: " +
           HtmlEscape(s.best->error) + "</p>";
    } else {
      h += "<details><summary>Scheduled program</summary><pre>" + HtmlEscape(s.best->program) +
           "</pre></details>";
    }
  }
  if (!s.peers.empty()) {
    h += "<h3>Peer figures</h3><table><tr><th>peer</th><th class=\"num\">latency</th><th "
         "class=\"num\">GFLOP/s</th>"
         "<th class=\"num\">Kiln best \u00f7 peer speed</th><th>note</th></tr>";
    for (const database::PeerFigure& p : s.peers) {
      h += "<tr><td>" + HtmlEscape(p.name) + "</td><td class=\"num\">" +
           HtmlEscape(FormatSeconds(p.seconds)) + "</td><td class=\"num\">" +
           GflopsText(Gflops(s.flops, p.seconds)) + "</td><td class=\"num\">" +
           (s.best ? RatioText(p, s.best->record.median_seconds) : "\u2013") + "</td><td>" +
           HtmlEscape(p.note) + "</td></tr>";
    }
    h += "</table>";
  }
  return h + "</section>";
}

}  // namespace

std::string GflopsText(double gflops) { return Fixed(gflops, 2); }

std::string CurveSvg(const WorkloadSection& s) {
  LineChart c;
  c.title = "Tuning curve of " + s.name + " on " + s.target;
  c.x_label = "trial";
  c.y_label = "best GFLOP/s";
  for (const CurveRun& r : s.runs) {
    c.x_max = std::max(c.x_max, static_cast<double>(r.trials));
    ChartSeries series{r.label, {}, false};
    for (const CurvePoint& p : r.points) series.points.emplace_back(p.trial, p.best_gflops);
    c.series.push_back(std::move(series));
  }
  for (const database::PeerFigure& p : s.peers) {
    const double g = Gflops(s.flops, p.seconds);
    c.series.push_back(
        {p.name + " (" + FormatNumber(g) + " GFLOP/s)", {{0, g}, {c.x_max, g}}, true});
  }
  return LineChartSvg(c);
}

std::string ReportHtml(const std::vector<WorkloadSection>& sections, const PageInfo& info) {
  size_t records = 0;
  for (const WorkloadSection& s : sections) records += s.records.size();
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>Kiln report: " +
      HtmlEscape(info.db_path) + "</title><style>" + kStyle + "</style></head><body><main>";
  h += "<h1>Kiln tuning report</h1><p class=\"meta\">database <code>" + HtmlEscape(info.db_path) +
       "</code> \u00b7 " + HtmlEscape(info.scope) + " \u00b7 " + std::to_string(sections.size()) +
       (sections.size() == 1 ? " workload/target" : " workload/target pairs") + " \u00b7 " +
       std::to_string(records) + " records" +
       (info.generated.empty() ? "" : " \u00b7 generated " + HtmlEscape(info.generated)) + "</p>";
  if (sections.empty()) {
    h += "<p>No records match.</p>";
  } else {
    h += "<table><tr><th>workload</th><th>target</th><th class=\"num\">trials</th><th "
         "class=\"num\">ok</th>"
         "<th class=\"num\">best latency</th><th class=\"num\">best GFLOP/s</th><th "
         "class=\"num\">vs peer</th></tr>";
    for (size_t i = 0; i < sections.size(); ++i) {
      const WorkloadSection& s = sections[i];
      std::string peer = "\u2013";
      if (s.best && !s.peers.empty()) {
        peer =
            RatioText(s.peers.front(), s.best->record.median_seconds) + " " + s.peers.front().name;
      }
      h += "<tr><td><a href=\"#" + HtmlEscape(Anchor(s, i)) + "\">" + HtmlEscape(s.name) +
           "</a></td><td><code>" + HtmlEscape(s.target) + "</code></td><td class=\"num\">" +
           std::to_string(s.records.size()) + "</td><td class=\"num\">" +
           std::to_string(CountUsable(s)) + "</td><td class=\"num\">" +
           (s.best ? HtmlEscape(FormatSeconds(s.best->record.median_seconds)) : "\u2013") +
           "</td><td class=\"num\">" +
           (s.best ? GflopsText(Gflops(s.flops, s.best->record.median_seconds)) : "\u2013") +
           "</td><td class=\"num\">" + HtmlEscape(peer) + "</td></tr>";
    }
    h += "</table>";
  }
  for (size_t i = 0; i < sections.size(); ++i) h += Section(sections[i], i);
  h +=
      "<p class=\"note\" style=\"margin-top:40px\">A trial is a stored record (failures included). "
      "A run is "
      "the records of one workload and target with the same job id and search seed; a resumed run "
      "continues "
      "its line. Only records whose status is ok and whose output was checked count as a best.</p>";
  h += "</main></body></html>\n";
  return h;
}

}  // namespace kiln::report
