// What the search hands to measurement and what comes back, and the Runner
// interface. The search knows only this interface; whether candidates are
// measured locally (rpc/local_runner.h) or on the farm is decided in tools/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/prim_func.h"
#include "ir/target.h"

namespace kiln::search {

// Dtype and shape of one kernel argument (TVM's ArgInfo).
struct ArgInfo {
  ir::DataType dtype;
  std::vector<int64_t> shape;
};
std::vector<ArgInfo> ArgInfoOf(const ir::PrimFunc& func);

// How a candidate is timed (TVM's protocol, docs/ARCHITECTURE.md §10): one warm-up call,
// then `repeat` repeats of `number` calls each; if a repeat is shorter than
// min_repeat_ms, `number` grows until it is not. The cache is flushed between
// repeats when flush_cache is set.
struct TimingConfig {
  int number = 3;
  int repeat = 1;
  double min_repeat_ms = 100;
  bool flush_cache = false;
  // Per candidate, build excluded; enforced by killing the child. 30 s is
  // TVM LocalRunner's default: the large convolutions of the suite have
  // candidates taking seconds per call on a 2-core machine, and with the
  // warm-up and `number` calls 10 s (TVM's RPC session default) timed most of
  // them out.
  double timeout_s = 30;
  // A CPU candidate whose checked first call lasts at least this long
  // (seconds; 0: off) is timed by that call alone, as one repeat. The tuning
  // loop sets it to a multiple of the workload's best so far
  // (TuneOptions::slow_call_factor): a candidate that slow cannot become
  // the best, and timing it in full (at least `number` more calls) would
  // tell the cost model nothing one call does not. Not part of a farm job's
  // timing (proto/kiln/v1/measure.proto): its workers time every candidate
  // in full.
  double slow_call_secs = 0;
};

enum class MeasureStatus { kOk, kBuildError, kRunCrash, kTimeout, kWrongResult, kInfraError };
const char* MeasureStatusName(MeasureStatus s);  // "ok", "build_error", "run_crash", ...
MeasureStatus ParseMeasureStatus(const std::string& name);  // throws std::invalid_argument

// One workload on one target, measured against the reference output of the
// unscheduled program on inputs drawn from input_seed.
struct MeasureTask {
  ir::PrimFunc workload;  // unscheduled
  ir::Target target;
  TimingConfig timing;
  uint64_t input_seed = 0;
};

struct MeasureCandidate {
  ir::PrimFunc scheduled;  // the workload with a schedule applied
  std::string trace_json;  // the trace that produced it (for records and logs)
};

struct MeasureResult {
  MeasureStatus status = MeasureStatus::kInfraError;
  std::string message;            // empty when ok; otherwise what went wrong, for a person
  std::vector<double> run_secs;   // every repeat's mean seconds per call (ok only)
  bool verified = false;          // outputs matched the reference
  double build_secs = 0;
  // Noise figures: the share of the machine's CPU time that other processes
  // used while the candidate ran (0..1; -1 when unknown), and whether the
  // repeats spread wider than kWideSpreadFraction of their median.
  double machine_load = -1;
  bool wide_spread = false;
  double MedianSecs() const;      // +inf unless ok
};

// A measurement whose repeats differ by more than this fraction of their
// median ((max - min) / median) is marked wide_spread.
inline constexpr double kWideSpreadFraction = 0.10;
// Other processes using more than this share of the CPUs make the machine
// busy: its timings are suspect (`kiln tune` warns).
inline constexpr double kBusyMachineLoad = 0.25;
bool IsWideSpread(const std::vector<double>& run_secs);

class Runner {
 public:
  virtual ~Runner() = default;
  // Builds and measures a batch; results come back in candidate order. Never
  // throws for a bad candidate: that is a result with an error status.
  virtual std::vector<MeasureResult> Measure(const MeasureTask& task,
                                             const std::vector<MeasureCandidate>& batch) = 0;
};

}  // namespace kiln::search
