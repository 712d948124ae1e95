#include "report/status_timeline.h"

#include <algorithm>
#include <set>

namespace kiln::report {

std::vector<StatusWindow> StatusTimeline(const std::vector<database::TuningRecord>& records,
                                         int max_windows) {
  std::vector<StatusWindow> out;
  const int64_t n = static_cast<int64_t>(records.size());
  if (n == 0) return out;
  const int64_t windows = std::clamp<int64_t>(max_windows, 1, n);
  const int64_t size = (n + windows - 1) / windows;
  for (int64_t i = 0; i < n; ++i) {
    const database::TuningRecord& r = records[static_cast<size_t>(i)];
    if (i % size == 0) {
      StatusWindow w;
      w.first_trial = i + 1;
      w.first_timestamp = r.provenance.timestamp;
      out.push_back(w);
    }
    StatusWindow& w = out.back();
    w.last_trial = i + 1;
    w.last_timestamp = r.provenance.timestamp;
    ++w.by_status[r.status];
  }
  return out;
}

std::vector<std::string> StatusesIn(const std::vector<StatusWindow>& windows) {
  std::set<std::string> seen;
  bool ok = false;
  for (const StatusWindow& w : windows) {
    for (const auto& [status, count] : w.by_status) {
      if (status == database::kStatusOk)
        ok = true;
      else
        seen.insert(status);
    }
  }
  std::vector<std::string> out;
  if (ok) out.push_back(database::kStatusOk);
  out.insert(out.end(), seen.begin(), seen.end());
  return out;
}

}  // namespace kiln::report
