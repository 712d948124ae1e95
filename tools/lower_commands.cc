// kiln lower: lower a workload (optionally scheduled by a trace) to the loop
// form the backends compile, and print it, optionally after every pass; for a
// cuda target, optionally the CUDA C++ the backend makes of it.
#include <iostream>
#include <memory>

#include "codegen/cuda/cuda_codegen.h"
#include "ir/text/printer.h"
#include "ir/transform/lower.h"
#include "ir/transform/verify_gpu_code.h"
#include "ir/transform/verify_lowered.h"
#include "tools/command_guard.h"
#include "tools/commands.h"
#include "tools/target_spec.h"
#include "tools/workload_spec.h"

namespace kiln::tools {

namespace {

struct LowerOptions {
  std::string workload;
  std::string trace_path;
  std::string target;  // empty: the CPU pipeline (no target needed)
  std::string emit = "tir";
  bool print_after_all = false;
};

void RunLower(const LowerOptions& o) {
  ResolvedWorkload w = ResolveWorkload(o.workload);
  ir::PrimFunc func = w.func;
  if (!o.trace_path.empty()) func = ApplyTraceJson(w.func, ReadTextFile(o.trace_path));
  std::function<void(const std::string&, const ir::PrimFunc&)> after_each;
  if (o.print_after_all) {
    std::cout << "# input\n" << ir::ToText(func) << "\n";
    after_each = [](const std::string& pass, const ir::PrimFunc& f) {
      std::cout << "# after " << pass << "\n" << ir::ToText(f) << "\n";
    };
  }
  const bool cuda = !o.target.empty() && ResolveTargetFlag(o.target).kind == ir::Target::Kind::kCUDA;
  if (o.emit == "cuda" && !cuda) {
    throw std::runtime_error("--emit cuda needs a cuda --target, e.g. \"cuda -arch=sm_90\"");
  }
  ir::Target target;
  if (!o.target.empty()) target = ResolveTargetFlag(o.target);
  ir::PrimFunc lowered = o.target.empty() ? ir::transform::Lower(func, after_each)
                                          : ir::transform::Lower(func, target, after_each);
  std::vector<std::string> issues = ir::transform::VerifyLowered(lowered);
  if (cuda) {
    std::vector<std::string> gpu =
        ir::transform::VerifyGPUCode(lowered, ir::transform::GpuLimits::FromTarget(target));
    issues.insert(issues.end(), gpu.begin(), gpu.end());
  }
  if (!issues.empty()) {
    std::string msg = "the lowered program breaks the lowered-form contract:";
    for (const auto& i : issues) msg += "\n  " + i;
    throw std::runtime_error(msg);
  }
  if (o.emit == "cuda") {
    std::cout << codegen::EmitCudaSource(lowered).source;
  } else if (!o.print_after_all) {
    std::cout << ir::ToText(lowered);
  }
}

}  // namespace

void RegisterLowerCommands(CLI::App& app, int* exit_code) {
  auto opts = std::make_shared<LowerOptions>();
  auto* cmd = app.add_subcommand("lower", "Lower a (scheduled) workload to loops and print it");
  cmd->add_option("--workload,-w", opts->workload, "Suite name (GMM, GMM:3) or a text file")
      ->required();
  cmd->add_option("--trace,-t", opts->trace_path,
                  "Trace JSON file to schedule with first ('-' reads stdin)");
  cmd->add_option("--target", opts->target,
                  "Lower for this target (\"cuda -arch=sm_90\" adds the GPU passes); "
                  "default: the CPU pipeline");
  cmd->add_option("--emit", opts->emit, "What to print: tir (the lowered program) or cuda")
      ->check(CLI::IsMember({"tir", "cuda"}));
  cmd->add_flag("--print-after-all", opts->print_after_all,
                "Print the input and the program after every pass");
  cmd->callback([opts, exit_code] { Guard(exit_code, [&] { RunLower(*opts); }); });
}

}  // namespace kiln::tools
