// The report page: one self-contained HTML document (inline CSS and SVG, no
// scripts, no fetches) for the sections of report/report_data.h.
#pragma once

#include <string>
#include <vector>

#include "report/report_data.h"

namespace kiln::report {

struct PageInfo {
  std::string db_path;    // shown as given
  std::string scope;      // what was selected, in words ("all records", "job 7")
  std::string generated;  // when, as text ("2026-12-04 14:05 UTC"); may be empty
};

std::string ReportHtml(const std::vector<WorkloadSection>& sections, const PageInfo& info);

// The tuning curve of one section as a standalone SVG document (`--svg`):
// one line per run, and a dashed line per peer figure.
std::string CurveSvg(const WorkloadSection& section);

// "123.46": GFLOP/s as the page and `kiln tune` print them (two decimals).
std::string GflopsText(double gflops);

}  // namespace kiln::report
