// kiln schedule: apply a trace to a workload and print the result.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "ir/text/printer.h"
#include "ir/schedule/schedule.h"
#include "tools/command_guard.h"
#include "tools/commands.h"
#include "tools/workload_spec.h"

namespace kiln::tools {

namespace {

struct ScheduleOptions {
  std::string workload;
  std::string trace_path;
  bool random = false;
  int64_t seed = 1;
  bool json = false;
};

void RunSchedule(const ScheduleOptions& o) {
  ResolvedWorkload w = ResolveWorkload(o.workload);
  ir::Trace trace = ir::Trace::FromJSONString(ReadTextFile(o.trace_path));
  if (o.random) trace = trace.WithoutDecisions();
  ir::Schedule sch(w.func, o.seed);
  trace.ApplyToSchedule(&sch, /*remove_postproc=*/false);
  const std::string program = ir::ToText(sch.func());
  if (o.json) {
    nlohmann::json out = {{"workload", w.label},
                          {"seed", o.seed},
                          {"trace", sch.trace().AsJSON()},
                          {"script", sch.trace().AsPython()},
                          {"program", program}};
    std::cout << out.dump(2) << "\n";
    return;
  }
  if (o.random) {
    std::cout << "# trace (seed " << o.seed << ")\n" << sch.trace().AsJSONString() << "\n\n";
    std::cout << "# schedule script\n" << sch.trace().AsPython() << "\n";
  }
  std::cout << program;
}

}  // namespace

void RegisterScheduleCommands(CLI::App& app, int* exit_code) {
  auto opts = std::make_shared<ScheduleOptions>();
  auto* cmd = app.add_subcommand("schedule", "Apply a trace to a workload and print the program");
  cmd->add_option("--workload,-w", opts->workload, "Suite name (GMM, GMM:3) or a text file")
      ->required();
  cmd->add_option("--trace,-t", opts->trace_path, "Trace JSON file ('-' reads stdin)")->required();
  cmd->add_flag("--random", opts->random,
                "Replay the instructions with fresh decisions; print the new trace too");
  cmd->add_option("--seed", opts->seed, "Seed for --random (default 1)");
  cmd->add_flag("--json", opts->json, "Print the trace, script and program as JSON");
  cmd->callback([opts, exit_code] { Guard(exit_code, [&] { RunSchedule(*opts); }); });
}

}  // namespace kiln::tools
