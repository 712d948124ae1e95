// The text of tuning progress, shared by `kiln tune` and `kiln submit` so
// that a farm job reads the same as a local run.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "search/tune.h"

namespace kiln::tools {

// "build_error 2, timeout 1", or "none".
std::string ErrorsText(const std::map<std::string, int64_t>& errors);
// "59.9 us", "3.41 ms", "1.20 s": kernel latencies span six orders of magnitude.
std::string LatencyText(double secs);
// "42 s", "3m05s", "2h10m".
std::string DurationText(double secs);
// "[16/64 trials] best 12.34 GFLOP/s, 1.20 ms; errors: none; ETA 3m05s".
std::string ProgressText(const search::TuneProgress& p);
// The warning that `busy` of `ok` measurements ran on a busy machine (other
// processes above search::kBusyMachineLoad of the CPUs); "" when busy is 0.
std::string BusyMachineWarning(int64_t busy, int64_t ok);

}  // namespace kiln::tools
