// kiln run: build, check and time one schedule of a workload (the unscheduled
// program without --trace) in the isolated runner, exactly as the tuner
// measures its candidates, and print seconds and GFLOP/s.
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "ir/flops.h"
#include "rpc/local_runner.h"
#include "search/measure.h"
#include "tools/command_guard.h"
#include "tools/commands.h"
#include "tools/target_spec.h"
#include "tools/workload_spec.h"

namespace kiln::tools {

namespace {

struct RunOptions {
  std::string workload;
  std::string target = "host";
  std::string trace_path;
  search::TimingConfig timing;
  uint64_t input_seed = 0;
  bool as_json = false;
};

int RunOne(const RunOptions& o) {
  ResolvedWorkload w = ResolveWorkload(o.workload);
  search::MeasureTask task{w.func, ResolveTargetFlag(o.target), o.timing, o.input_seed};
  RequireMeasurableTarget(task.target);
  search::MeasureCandidate cand{w.func, "[[], []]"};
  if (!o.trace_path.empty()) {
    cand.trace_json = ReadTextFile(o.trace_path);
    cand.scheduled = ApplyTraceJson(w.func, cand.trace_json);
  }
  rpc::LocalRunner runner;
  search::MeasureResult r = runner.Measure(task, {cand}).at(0);
  bool ok = r.status == search::MeasureStatus::kOk;
  double secs = r.MedianSecs();
  double gflops = ok && secs > 0 ? ir::EstimateFlops(w.func) / secs / 1e9 : 0;
  if (o.as_json) {
    nlohmann::json out = {{"workload", w.label},
                          {"target", task.target.ToString()},
                          {"status", search::MeasureStatusName(r.status)},
                          {"message", r.message},
                          {"verified", r.verified},
                          {"build_secs", r.build_secs},
                          {"run_secs", r.run_secs}};
    if (ok) {
      out["median_secs"] = secs;
      out["gflops"] = gflops;
    }
    std::cout << out.dump(2) << "\n";
  } else if (ok) {
    std::cout << w.label << " on '" << task.target.ToString() << "': ok"
              << (r.verified ? ", output verified against the unscheduled program" : "") << "\n"
              << "  median " << secs << " s per call, " << gflops << " GFLOP/s\n  repeats:";
    for (double s : r.run_secs) std::cout << " " << s;
    std::cout << "\n  build " << r.build_secs << " s\n";
  }
  if (!ok) {
    std::cerr << "kiln: " << search::MeasureStatusName(r.status) << ": " << r.message << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

void RegisterRunCommands(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand(
      "run", "Build, verify and time one schedule of a workload in the isolated runner");
  cmd->add_option("--workload,-w", o->workload, "Suite name (GMM, GMM:3) or a text file")
      ->required();
  cmd->add_option("--target", o->target, "Target: 'host' or e.g. 'llvm -mcpu=skylake-avx512'")
      ->capture_default_str();
  cmd->add_option("--trace,-t", o->trace_path,
                  "Trace JSON to schedule with (default: the unscheduled program)");
  cmd->add_option("--number", o->timing.number, "Calls per repeat (grown to --min-repeat-ms)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--repeat", o->timing.repeat, "Timed repeats")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_option("--min-repeat-ms", o->timing.min_repeat_ms, "Minimum duration of one repeat")
      ->check(CLI::Range(0.0, 600000.0))
      ->capture_default_str();
  cmd->add_flag("--flush-cache", o->timing.flush_cache, "Flush the CPU caches between repeats");
  cmd->add_option("--timeout", o->timing.timeout_s, "Seconds before the run is killed")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  cmd->add_option("--input-seed", o->input_seed, "Seed of the random inputs")->capture_default_str();
  cmd->add_flag("--json", o->as_json, "Print the result as JSON");
  cmd->callback([o, exit_code] { Guard(exit_code, [&] { return RunOne(*o); }); });
}

}  // namespace kiln::tools
