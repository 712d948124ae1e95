// kiln target: the canonical short form of a target string (issue 16), the
// string `kiln tune` stores and `kiln query` matches, so that a build
// pipeline can learn what to type for a machine: `kiln target host`.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "codegen/target_features.h"
#include "tools/commands.h"
#include "tools/target_spec.h"

namespace kiln::tools {

void RegisterTargetCommands(CLI::App& app, int* exit_code) {
  struct Args {
    std::string spec = "host";
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "target", "Print a target in the canonical form records are stored under");
  cmd->add_option("target", a->spec, "'host' or a target string, e.g. 'llvm -mcpu=znver4'")
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "Print JSON, with every feature the target enables");
  cmd->callback([a, exit_code] {
    try {
      const ir::Target t = ResolveTargetFlag(a->spec);
      if (!a->json) {
        std::cout << t.ToString() << "\n";
        return;
      }
      nlohmann::json out = {{"target", t.ToString()}, {"kind", t.KindName()}};
      if (t.kind == ir::Target::Kind::kLLVM) {
        out["cpu"] = t.mcpu;
        out["num_cores"] = t.num_cores;
        out["features"] = codegen::EnabledFeatures(t);
      }
      std::cout << out.dump(2) << "\n";
    } catch (const std::exception& e) {
      std::cerr << "kiln: error: " << e.what() << "\n";
      *exit_code = 1;
    }
  });
}

}  // namespace kiln::tools
