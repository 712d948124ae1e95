// kiln workloads | show | check | hash: the IR-level commands.
#include <algorithm>
#include <array>
#include <iomanip>
#include <memory>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ir/error.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/structural_hash.h"
#include "ir/verify.h"
#include "ir/workloads/suite.h"
#include "tools/command_guard.h"
#include "tools/commands.h"
#include "tools/workload_spec.h"

namespace kiln::tools {

namespace {

using nlohmann::json;

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::ostringstream s;
  s << "(";
  for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << (shape.size() == 1 ? ",)" : ")");
  return s.str();
}

// Runs fn, turning any exception into an error line and exit code 1.
void Workloads(bool as_json) {
  json out = json::array();
  for (const auto& cfg : ir::SuiteConfigs()) {
    ir::WorkloadInfo info = ir::DescribeWorkload(cfg.name, cfg.index);
    json args = json::array();
    for (const auto& [name, shape] : info.args) args.push_back({{"name", name}, {"shape", shape}});
    out.push_back({{"name", cfg.name},
                   {"index", cfg.index},
                   {"spec", cfg.name + ":" + std::to_string(cfg.index)},
                   {"params", cfg.params},
                   {"args", args},
                   {"flops", info.flops}});
  }
  if (as_json) {
    std::cout << out.dump(2) << "\n";
    return;
  }
  // Columns sized to their content so long names and configs stay aligned.
  std::vector<std::array<std::string, 4>> rows = {{"WORKLOAD", "CONFIG", "GFLOP", "ARGS"}};
  for (const auto& w : out) {
    std::string args;
    for (const auto& a : w["args"]) {
      if (!args.empty()) args += " ";
      args += a["name"].get<std::string>() + ShapeText(a["shape"].get<std::vector<int64_t>>());
    }
    std::ostringstream gflop;
    gflop << std::setprecision(4) << w["flops"].get<double>() / 1e9;
    rows.push_back({w["spec"].get<std::string>(), w["params"].get<std::string>(), gflop.str(), args});
  }
  std::array<size_t, 3> width{};
  for (const auto& r : rows) {
    for (size_t c = 0; c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  for (const auto& r : rows) {
    std::cout << std::left;
    for (size_t c = 0; c < width.size(); ++c) std::cout << std::setw(width[c] + 2) << r[c];
    std::cout << r[3] << "\n";
  }
}

}  // namespace

void RegisterIrCommands(CLI::App& app, int* exit_code) {
  auto* workloads = app.add_subcommand("workloads", "List the built-in workload suite");
  auto workloads_json = std::make_shared<bool>(false);
  workloads->add_flag("--json", *workloads_json, "Print JSON");
  workloads->callback([=] { Guard(exit_code, [&] { Workloads(*workloads_json); }); });

  auto* show = app.add_subcommand("show", "Print a workload in the canonical text form");
  auto show_spec = std::make_shared<std::string>();
  show->add_option("workload", *show_spec, "Suite name (GMM, GMM:3) or a text file")->required();
  show->callback([=] {
    Guard(exit_code, [&] { std::cout << ir::ToText(ResolveWorkload(*show_spec).func); });
  });

  auto* check = app.add_subcommand("check", "Parse and verify text files ('-' reads stdin)");
  auto check_files = std::make_shared<std::vector<std::string>>();
  check->add_option("files", *check_files, "Files to check")->required();
  auto check_json = std::make_shared<bool>(false);
  check->add_flag("--json", *check_json, "Print one JSON result per file");
  check->callback([=] {
    json results = json::array();
    for (const auto& file : *check_files) {
      json r = {{"file", file}, {"ok", false}};
      try {
        std::string text = ReadTextFile(file);
        std::vector<ir::PrimFunc> funcs =
            ir::ParseFuncs(text, file == "-" ? "<stdin>" : file);
        std::vector<std::string> issues;
        for (const auto& f : funcs) {
          for (const auto& issue : ir::VerifyFunc(f)) {
            issues.push_back(f.name + ": " + issue.where + ": " + issue.message);
          }
        }
        r["functions"] = funcs.size();
        if (issues.empty()) {
          r["ok"] = true;
          if (!*check_json) std::cout << file << ": ok (" << funcs.size() << " function(s))\n";
        } else {
          r["errors"] = issues;
          for (const auto& i : issues) {
            if (!*check_json) std::cerr << file << ": error: " << i << "\n";
          }
        }
      } catch (const std::exception& e) {
        r["errors"] = {e.what()};
        if (!*check_json) std::cerr << e.what() << "\n";
      }
      if (!r["ok"].get<bool>()) *exit_code = 1;
      results.push_back(r);
    }
    if (*check_json) std::cout << results.dump(2) << "\n";
  });

  auto* hash = app.add_subcommand("hash", "Print a workload's structural hash");
  auto hash_spec = std::make_shared<std::string>();
  hash->add_option("workload", *hash_spec, "Suite name (GMM, GMM:3) or a text file")->required();
  auto hash_json = std::make_shared<bool>(false);
  hash->add_flag("--json", *hash_json, "Print JSON");
  hash->callback([=] {
    Guard(exit_code, [&] {
      ResolvedWorkload w = ResolveWorkload(*hash_spec);
      std::string h = ir::StructuralHashHex(w.func);
      if (*hash_json) {
        std::cout << json{{"workload", w.label}, {"hash", h}}.dump() << "\n";
      } else {
        std::cout << h << "\n";
      }
    });
  });
}

}  // namespace kiln::tools
