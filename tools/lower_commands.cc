// kiln lower: lower a workload (optionally scheduled by a trace) to the loop
// form the backends compile, and print it, optionally after every pass.
#include <iostream>
#include <memory>

#include "ir/printer.h"
#include "ir/transform/lower.h"
#include "ir/transform/verify_lowered.h"
#include "tools/commands.h"
#include "tools/workload_spec.h"

namespace kiln::tools {

namespace {

struct LowerOptions {
  std::string workload;
  std::string trace_path;
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
  ir::PrimFunc lowered = ir::transform::Lower(func, after_each);
  std::vector<std::string> issues = ir::transform::VerifyLowered(lowered);
  if (!issues.empty()) {
    std::string msg = "the lowered program breaks the lowered-form contract:";
    for (const auto& i : issues) msg += "\n  " + i;
    throw std::runtime_error(msg);
  }
  if (!o.print_after_all) std::cout << ir::ToText(lowered);
}

}  // namespace

void RegisterLowerCommands(CLI::App& app, int* exit_code) {
  auto opts = std::make_shared<LowerOptions>();
  auto* cmd = app.add_subcommand("lower", "Lower a (scheduled) workload to loops and print it");
  cmd->add_option("--workload,-w", opts->workload, "Suite name (GMM, GMM:3) or a text file")
      ->required();
  cmd->add_option("--trace,-t", opts->trace_path,
                  "Trace JSON file to schedule with first ('-' reads stdin)");
  cmd->add_flag("--print-after-all", opts->print_after_all,
                "Print the input and the program after every pass");
  cmd->callback([opts, exit_code] {
    try {
      RunLower(*opts);
    } catch (const std::exception& e) {
      std::cerr << "kiln: error: " << e.what() << "\n";
      *exit_code = 1;
    }
  });
}

}  // namespace kiln::tools
