// kiln config check: validates target presets, search presets and job files
// against their schemas (config/presets.h); and the presets `kiln tune` reads
// with --target-preset / --search-preset.
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "config/presets.h"
#include "rpc/proto_convert.h"
#include "search/prior_model.h"
#include "tools/commands.h"
#include "tools/tune_cli.h"

namespace kiln::tools {
namespace {

namespace fs = std::filesystem;

// Where preset names are looked up, first match wins: $KILN_CONFIG_DIR, the
// working directory's configs/, then the configs/ of the source tree a
// build/tools/kiln binary sits in, and an installed share/kiln/configs.
std::vector<std::string> ConfigDirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("KILN_CONFIG_DIR"); env != nullptr && *env != '\0')
    dirs.push_back(env);
  dirs.push_back("configs");
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    const fs::path bin = fs::path(std::string(exe, static_cast<size_t>(n))).parent_path();
    dirs.push_back((bin / ".." / ".." / "configs").lexically_normal().string());
    dirs.push_back((bin / ".." / "share" / "kiln" / "configs").lexically_normal().string());
  }
  return dirs;
}

}  // namespace

std::vector<std::string> PriorModelFiles(const std::string& flag) {
  if (flag == search::kAutoPriorModel) return config::ListPresets("models", ConfigDirs(), ".model");
  if (flag.empty() || flag == search::kNoPriorModel) return {};
  try {
    return {config::FindPreset(flag, "models", ConfigDirs(), ".model")};
  } catch (const config::ConfigError& e) {
    throw config::ConfigError(std::string("--prior-model: ") + e.what());
  }
}

void ApplyPresets(TuneCliOptions* o) {
  if (o->prior_model != search::kAutoPriorModel && !o->prior_model.empty() &&
      o->prior_model != search::kNoPriorModel) {
    o->prior_model = PriorModelFiles(o->prior_model).front();
  }
  if (!o->target_preset.empty()) {
    const std::string path = config::FindPreset(o->target_preset, "targets", ConfigDirs());
    const v1::TargetPreset p = config::LoadTargetPreset(path);
    if (o->given.count("--target") == 0) {
      o->target = p.target();
      o->given.insert("--target");
    }
  }
  if (!o->search_preset.empty()) {
    const std::string path = config::FindPreset(o->search_preset, "search", ConfigDirs());
    const v1::SearchPreset p = config::LoadSearchPreset(path);
    // A flag on the command line wins over the preset, and the preset (named
    // on the command line) over a --job file.
    auto set = [o](const char* flag, auto* field, auto value, bool present) {
      if (!present || o->given.count(flag) > 0) return;
      *field = value;
      o->given.insert(flag);
    };
    set("--strategy", &o->strategy, p.strategy(), !p.strategy().empty());
    set("--trials", &o->trials, p.trials(), p.trials() > 0);
    set("--trials-per-iter", &o->trials_per_iter, p.trials_per_iter(), p.trials_per_iter() > 0);
    set("--trials-per-task", &o->trials_per_task, p.trials_per_task(), p.trials_per_task() > 0);
    set("--cost-model", &o->cost_model, p.cost_model(), !p.cost_model().empty());
    set("--task-scheduler", &o->task_scheduler, p.task_scheduler(), !p.task_scheduler().empty());
    if (p.has_timing()) {
      const search::TimingConfig t = rpc::FromProto(p.timing());
      const v1::TimingConfig& pt = p.timing();
      set("--number", &o->timing.number, t.number, pt.number() != 0);
      set("--repeat", &o->timing.repeat, t.repeat, pt.repeat() != 0);
      set("--min-repeat-ms", &o->timing.min_repeat_ms, t.min_repeat_ms, pt.min_repeat_ms() != 0);
      set("--timeout", &o->timing.timeout_s, t.timeout_s, pt.timeout_s() != 0);
    }
  }
}

void RegisterConfigCommands(CLI::App& app, int* exit_code) {
  auto* config =
      app.add_subcommand("config", "Config files: target presets, search presets, job files");
  config->require_subcommand(1);
  struct CheckOptions {
    std::vector<std::string> files;
    std::string kind;
    bool json = false;
  };
  auto o = std::make_shared<CheckOptions>();
  auto* check = config->add_subcommand(
      "check",
      "Validate config files against their schema (proto/kiln/v1/config.proto, job.proto)");
  check
      ->add_option("files", o->files,
                   "Files; the kind comes from the folder (targets/, search/, jobs/)")
      ->required();
  check->add_option("--kind", o->kind, "The kind of every file: target, search or job")
      ->check(CLI::IsMember({"target", "search", "job"}));
  check->add_flag("--json", o->json, "Print one JSON object per file");
  check->callback([o, exit_code] {
    int bad = 0;
    nlohmann::json out = nlohmann::json::array();
    for (const std::string& file : o->files) {
      try {
        std::optional<config::ConfigKind> kind;
        if (!o->kind.empty()) kind = config::ParseKind(o->kind);
        const std::string summary = config::CheckConfigFile(file, kind);
        if (o->json) {
          out.push_back({{"file", file}, {"ok", true}, {"summary", summary}});
        } else {
          std::cout << file << ": ok (" << summary << ")\n";
        }
      } catch (const std::exception& e) {
        ++bad;
        if (o->json) {
          out.push_back({{"file", file}, {"ok", false}, {"error", e.what()}});
        } else {
          std::cerr << "kiln: error: " << e.what() << "\n";
        }
      }
    }
    if (o->json) std::cout << out.dump(2) << "\n";
    *exit_code = bad == 0 ? 0 : 1;
  });
}

}  // namespace kiln::tools
