// The report's charts as inline SVG: a step-line chart (tuning curves), a
// histogram and stacked bars (statuses over trials). Plain strings, no
// scripts, so that the page renders the same with JavaScript off and the
// `--svg` file opens in any viewer.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "report/histogram.h"
#include "report/status_timeline.h"

namespace kiln::report {

// "Nice" tick values (1, 2, 5 times a power of ten) covering [lo, hi],
// about `count` of them; lo <= hi.
std::vector<double> NiceTicks(double lo, double hi, int count);
// A number for an axis or a table: 3 significant digits, no exponent for
// ordinary magnitudes.
std::string FormatNumber(double v);
// "850 ns", "12.3 us", "4.56 ms", "1.20 s".
std::string FormatSeconds(double seconds);

struct ChartSeries {
  std::string label;
  std::vector<std::pair<double, double>> points;  // drawn as steps: hold y until the next x
  bool dashed = false;                            // a reference line (a peer's figure)
};

struct LineChart {
  std::string title;  // for screen readers (<title>)
  std::string x_label;
  std::string y_label;
  double x_max = 0;  // the x axis runs from 0 (or 1) to at least this
  std::vector<ChartSeries> series;
  int width = 1024;
  int height = 340;
};

std::string LineChartSvg(const LineChart& chart);
std::string HistogramSvg(const Histogram& h, const std::string& title, int width = 720,
                         int height = 260);
std::string StatusBarsSvg(const std::vector<StatusWindow>& windows, const std::string& title,
                          int width = 720, int height = 260);

// The color the charts give a status, and the i-th run's line color.
std::string StatusColor(const std::string& status);
std::string SeriesColor(size_t i);

}  // namespace kiln::report
