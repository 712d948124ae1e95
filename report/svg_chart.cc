#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

#include "report/html_escape.h"

namespace kiln::report {
namespace {

// Plot area margins (pixels): room for the tick labels and the axis titles.
constexpr double kLeft = 68, kRight = 18, kTop = 16, kBottom = 46;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string Text(double x, double y, const std::string& text, const std::string& anchor,
                 const std::string& cls = "tick") {
  return "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" text-anchor=\"" + anchor + "\" class=\"" +
         cls + "\">" + HtmlEscape(text) + "</text>";
}

std::string Open(int width, int height, const std::string& title) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 " +
         std::to_string(width) + " " + std::to_string(height) + "\" width=\"" +
         std::to_string(width) + "\" height=\"" + std::to_string(height) +
         "\" role=\"img\" font-family=\"system-ui, sans-serif\" font-size=\"12\">"
         "<title>" +
         HtmlEscape(title) +
         "</title>"
         "<style>.tick{fill:#475569;font-size:11px}.axis{fill:#1e293b;font-size:12px}"
         ".legend{fill:#1e293b;font-size:12px}</style>"
         "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>";
}

// Horizontal grid lines with their labels on the left, and the y axis title.
std::string YAxis(const std::vector<double>& ticks, double y_max, double plot_w, double plot_h,
                  const std::string& label, const std::function<std::string(double)>& fmt) {
  std::string s;
  for (double t : ticks) {
    const double y = kTop + plot_h - t / y_max * plot_h;
    s += "<line x1=\"" + Num(kLeft) + "\" x2=\"" + Num(kLeft + plot_w) + "\" y1=\"" + Num(y) +
         "\" y2=\"" + Num(y) + "\" stroke=\"#e2e8f0\"/>";
    s += Text(kLeft - 6, y + 4, fmt(t), "end");
  }
  const double cy = kTop + plot_h / 2;
  s += "<text transform=\"translate(16 " + Num(cy) +
       ") rotate(-90)\" text-anchor=\"middle\" class=\"axis\">" + HtmlEscape(label) + "</text>";
  return s;
}

std::string Frame(double plot_w, double plot_h) {
  return "<line x1=\"" + Num(kLeft) + "\" x2=\"" + Num(kLeft + plot_w) + "\" y1=\"" +
         Num(kTop + plot_h) + "\" y2=\"" + Num(kTop + plot_h) + "\" stroke=\"#64748b\"/>" +
         "<line x1=\"" + Num(kLeft) + "\" x2=\"" + Num(kLeft) + "\" y1=\"" + Num(kTop) +
         "\" y2=\"" + Num(kTop + plot_h) + "\" stroke=\"#64748b\"/>";
}

}  // namespace

std::vector<double> NiceTicks(double lo, double hi, int count) {
  if (!(hi > lo) || count < 1) return {lo};
  const double raw = (hi - lo) / count;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) {
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  }
  return ticks;
}

std::string FormatNumber(double v) {
  char buf[48];
  const double a = std::abs(v);
  if (a == 0) return "0";
  if (a >= 1e6 || a < 1e-3) {
    std::snprintf(buf, sizeof buf, "%.3g", v);
  } else if (a >= 100) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else if (a >= 10) {
    std::snprintf(buf, sizeof buf, "%.1f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f", v);
  }
  std::string s = buf;
  // "2.50" reads as "2.5" on an axis; keep one digit of a fraction.
  if (s.find('.') != std::string::npos && s.find('e') == std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string FormatSeconds(double seconds) {
  const double a = std::abs(seconds);
  if (a >= 1) return FormatNumber(seconds) + " s";
  if (a >= 1e-3) return FormatNumber(seconds * 1e3) + " ms";
  if (a >= 1e-6) return FormatNumber(seconds * 1e6) + " \u00b5s";
  return FormatNumber(seconds * 1e9) + " ns";
}

std::string SeriesColor(size_t i) {
  static const char* kColors[] = {"#2563eb", "#ea580c", "#059669", "#9333ea",
                                  "#0891b2", "#db2777", "#65a30d", "#475569"};
  return kColors[i % (sizeof kColors / sizeof kColors[0])];
}

std::string StatusColor(const std::string& status) {
  static const std::map<std::string, std::string> kColors = {
      {"ok", "#86c99a"},      {"build_error", "#f59e0b"},  {"run_crash", "#dc2626"},
      {"timeout", "#7c3aed"}, {"wrong_result", "#db2777"}, {"infra_error", "#64748b"}};
  auto it = kColors.find(status);
  return it == kColors.end() ? "#0ea5e9" : it->second;
}

std::string LineChartSvg(const LineChart& c) {
  const double plot_w = c.width - kLeft - kRight;
  // The legend is a row (or rows) above the plot, so that it never covers a
  // curve; item widths are estimated from the label's length.
  std::string legend;
  double lx = kLeft;
  double ly = 14;
  {
    size_t color = 0;
    for (const ChartSeries& series : c.series) {
      const std::string col = series.dashed ? "#334155" : SeriesColor(color++);
      const double item_w = 34 + 6.6 * static_cast<double>(series.label.size());
      if (lx > kLeft && lx + item_w > c.width - kRight) {
        lx = kLeft;
        ly += 18;
      }
      legend += "<line x1=\"" + Num(lx) + "\" x2=\"" + Num(lx + 20) + "\" y1=\"" + Num(ly - 4) +
                "\" y2=\"" + Num(ly - 4) + "\" stroke=\"" + col + "\" stroke-width=\"2.2\"" +
                (series.dashed ? " stroke-dasharray=\"5 3\"" : "") + "/>";
      legend += Text(lx + 26, ly, series.label, "start", "legend");
      lx += item_w;
    }
  }
  const double legend_h = c.series.empty() ? 0 : ly + 8;
  const double plot_h = c.height - kTop - kBottom - legend_h;
  double x_max = std::max(1.0, c.x_max);
  double y_top = 0;
  for (const ChartSeries& series : c.series) {
    for (const auto& [x, y] : series.points) {
      x_max = std::max(x_max, x);
      y_top = std::max(y_top, y);
    }
  }
  if (y_top <= 0) y_top = 1;
  std::vector<double> yt = NiceTicks(0, y_top * 1.05, 5);
  const double y_max = std::max(yt.back(), y_top * 1.05);
  std::vector<double> xt = NiceTicks(0, x_max, 8);
  const auto px = [&](double x) { return kLeft + x / x_max * plot_w; };
  const auto py = [&](double y) { return kTop + plot_h - y / y_max * plot_h; };

  std::string s = Open(c.width, c.height, c.title) + legend;
  s += "<g transform=\"translate(0 " + Num(legend_h) + ")\">";
  s += YAxis(yt, y_max, plot_w, plot_h, c.y_label, FormatNumber);
  for (double t : xt) {
    if (t > x_max) continue;
    s += Text(px(t), kTop + plot_h + 16, FormatNumber(t), "middle");
  }
  s += Text(kLeft + plot_w / 2, c.height - legend_h - 8, c.x_label, "middle", "axis");
  s += Frame(plot_w, plot_h);
  size_t color = 0;
  for (const ChartSeries& series : c.series) {
    const std::string col = series.dashed ? "#334155" : SeriesColor(color++);
    if (series.points.empty()) continue;
    std::string d;
    for (size_t i = 0; i < series.points.size(); ++i) {
      const auto [x, y] = series.points[i];
      if (i == 0) {
        d += "M" + Num(px(x)) + " " + Num(py(y));
      } else {
        d += " H" + Num(px(x)) + " V" + Num(py(y));
      }
    }
    s += "<path d=\"" + d + "\" fill=\"none\" stroke=\"" + col + "\" stroke-width=\"" +
         (series.dashed ? "1.5\" stroke-dasharray=\"6 4" : "2.2") +
         "\" stroke-linejoin=\"round\"/>";
    if (!series.dashed) {
      const auto [x0, y0] = series.points.front();
      s += "<circle cx=\"" + Num(px(x0)) + "\" cy=\"" + Num(py(y0)) + "\" r=\"2.5\" fill=\"" + col +
           "\"/>";
    }
  }
  s += "</g></svg>";
  return s;
}

std::string HistogramSvg(const Histogram& h, const std::string& title, int width, int height) {
  const double plot_w = width - kLeft - kRight;
  const double plot_h = height - kTop - kBottom;
  std::string s = Open(width, height, title);
  if (h.counts.empty()) {
    s += Text(width / 2.0, height / 2.0, "no measured latencies", "middle", "axis");
    return s + "</svg>";
  }
  int64_t top = *std::max_element(h.counts.begin(), h.counts.end());
  std::vector<double> yt = NiceTicks(0, static_cast<double>(top), 4);
  // Counts are whole numbers: drop fractional ticks.
  yt.erase(std::remove_if(yt.begin(), yt.end(), [](double t) { return t != std::floor(t); }),
           yt.end());
  const double y_max = std::max(yt.back(), static_cast<double>(top)) * 1.05;
  s += YAxis(yt, y_max, plot_w, plot_h, "candidates", FormatNumber);
  const size_t n = h.counts.size();
  const double bw = plot_w / static_cast<double>(n);
  for (size_t i = 0; i < n; ++i) {
    const double bh = static_cast<double>(h.counts[i]) / y_max * plot_h;
    s += "<rect x=\"" + Num(kLeft + i * bw + 1) + "\" y=\"" + Num(kTop + plot_h - bh) +
         "\" width=\"" + Num(std::max(1.0, bw - 2)) + "\" height=\"" + Num(bh) +
         "\" fill=\"#60a5fa\"><title>" +
         HtmlEscape(FormatSeconds(h.edges[i]) + " \u2013 " + FormatSeconds(h.edges[i + 1]) + ": " +
                    std::to_string(h.counts[i])) +
         "</title></rect>";
  }
  // About five edge labels, whatever the bin count.
  const size_t every = std::max<size_t>(1, (n + 4) / 5);
  for (size_t i = 0; i <= n; i += every) {
    s += Text(kLeft + i * bw, kTop + plot_h + 16, FormatSeconds(h.edges[i]), "middle");
  }
  if (n % every != 0)
    s += Text(kLeft + n * bw, kTop + plot_h + 16, FormatSeconds(h.edges[n]), "middle");
  s +=
      Text(kLeft + plot_w / 2, height - 8,
           std::string("median latency of each ok candidate") + (h.log_scale ? " (log scale)" : ""),
           "middle", "axis");
  s += Frame(plot_w, plot_h);
  return s + "</svg>";
}

std::string StatusBarsSvg(const std::vector<StatusWindow>& windows, const std::string& title,
                          int width, int height) {
  const double plot_w = width - kLeft - kRight - 110;  // room for the legend on the right
  const double plot_h = height - kTop - kBottom;
  std::string s = Open(width, height, title);
  if (windows.empty()) {
    s += Text(width / 2.0, height / 2.0, "no records", "middle", "axis");
    return s + "</svg>";
  }
  int64_t top = 0;
  for (const StatusWindow& w : windows) top = std::max(top, w.last_trial - w.first_trial + 1);
  std::vector<double> yt = NiceTicks(0, static_cast<double>(top), 4);
  yt.erase(std::remove_if(yt.begin(), yt.end(), [](double t) { return t != std::floor(t); }),
           yt.end());
  const double y_max = std::max(yt.back(), static_cast<double>(top)) * 1.05;
  s += YAxis(yt, y_max, plot_w, plot_h, "trials", FormatNumber);
  const std::vector<std::string> statuses = StatusesIn(windows);
  const double bw = plot_w / static_cast<double>(windows.size());
  for (size_t i = 0; i < windows.size(); ++i) {
    const StatusWindow& w = windows[i];
    double y = kTop + plot_h;
    for (const std::string& st : statuses) {
      auto it = w.by_status.find(st);
      if (it == w.by_status.end()) continue;
      const double bh = static_cast<double>(it->second) / y_max * plot_h;
      y -= bh;
      s += "<rect x=\"" + Num(kLeft + i * bw + 1) + "\" y=\"" + Num(y) + "\" width=\"" +
           Num(std::max(1.0, bw - 2)) + "\" height=\"" + Num(bh) + "\" fill=\"" + StatusColor(st) +
           "\"><title>" +
           HtmlEscape("trials " + std::to_string(w.first_trial) + "\u2013" +
                      std::to_string(w.last_trial) + ": " + std::to_string(it->second) + " " + st) +
           "</title></rect>";
    }
  }
  const size_t every = std::max<size_t>(1, (windows.size() + 5) / 6);
  for (size_t i = 0; i < windows.size(); i += every) {
    s += Text(kLeft + (i + 0.5) * bw, kTop + plot_h + 16, std::to_string(windows[i].first_trial),
              "middle");
  }
  s += Text(kLeft + plot_w / 2, height - 8, "trial (commit order); each bar a window of trials",
            "middle", "axis");
  s += Frame(plot_w, plot_h);
  double ly = kTop + 12;
  for (const std::string& st : statuses) {
    s += "<rect x=\"" + Num(kLeft + plot_w + 16) + "\" y=\"" + Num(ly - 10) +
         "\" width=\"12\" height=\"12\" fill=\"" + StatusColor(st) + "\"/>";
    s += Text(kLeft + plot_w + 34, ly, st, "start", "legend");
    ly += 18;
  }
  return s + "</svg>";
}

}  // namespace kiln::report
