// Failures by kind over the course of tuning: the records, in commit order,
// cut into windows of consecutive trials, each with its count per status.
// Trials rather than clock time are the axis because a database often holds
// runs days apart; each window keeps its first and last timestamp for the
// page to show.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "database/record.h"

namespace kiln::report {

struct StatusWindow {
  int64_t first_trial = 0;  // 1-based, inclusive
  int64_t last_trial = 0;
  int64_t first_timestamp = 0;
  int64_t last_timestamp = 0;
  std::map<std::string, int64_t> by_status;  // "ok", "build_error", ...
};

// At most `max_windows` windows of equal size (the last may be shorter).
std::vector<StatusWindow> StatusTimeline(const std::vector<database::TuningRecord>& records,
                                         int max_windows);

// Every status that occurs in `windows`, "ok" first, then the rest sorted.
std::vector<std::string> StatusesIn(const std::vector<StatusWindow>& windows);

}  // namespace kiln::report
