#include "config/presets.h"

#include <cmath>
#include <filesystem>
#include <set>

#include "ir/target.h"
#include "rpc/farm/job_file.h"
#include "rpc/proto_convert.h"

namespace kiln::config {
namespace {

namespace fs = std::filesystem;

std::string Stem(const std::string& name) { return fs::path(name).stem().string(); }

// The preset's name, when set, is its file's stem: `--target-preset NAME`
// finds NAME.json, and a copied file that kept the old name would mislead.
template <typename Preset>
void CheckName(const Preset& p, std::string_view text, ConfigFormat format,
               const std::string& name) {
  if (!p.name().empty() && p.name() != Stem(name)) {
    throw ConfigError(
        FieldError(text, format, name, "name",
                   "'" + p.name() + "' but the file is " + Stem(name) + "; they must agree"));
  }
}

void OneOf(std::string_view text, ConfigFormat format, const std::string& name,
           const std::string& field, const std::string& value,
           const std::set<std::string>& allowed) {
  if (value.empty() || allowed.count(value) > 0) return;
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "'" : ", '") + a + "'";
  throw ConfigError(FieldError(text, format, name, field, "'" + value + "'; one of " + list));
}

}  // namespace

std::string KindName(ConfigKind kind) {
  switch (kind) {
    case ConfigKind::kTargetPreset:
      return "target preset";
    case ConfigKind::kSearchPreset:
      return "search preset";
    case ConfigKind::kJob:
      return "job file";
  }
  return "config";
}

ConfigKind ParseKind(const std::string& word) {
  if (word == "target") return ConfigKind::kTargetPreset;
  if (word == "search") return ConfigKind::kSearchPreset;
  if (word == "job") return ConfigKind::kJob;
  throw ConfigError("--kind '" + word + "': one of 'target', 'search', 'job'");
}

std::optional<ConfigKind> KindOfPath(const std::string& path) {
  const std::string dir = fs::path(path).parent_path().filename().string();
  if (dir == "targets") return ConfigKind::kTargetPreset;
  if (dir == "search") return ConfigKind::kSearchPreset;
  if (dir == "jobs") return ConfigKind::kJob;
  return std::nullopt;
}

v1::TargetPreset ParseTargetPreset(std::string_view text, ConfigFormat format,
                                   const std::string& name) {
  v1::TargetPreset p;
  ParseConfigText(text, format, name, &p);
  CheckName(p, text, format, name);
  if (p.target().empty())
    throw ConfigError(
        FieldError(text, format, name, "target", "missing; a target string is required"));
  ir::Target target;
  try {
    target = ir::Target::Parse(p.target());
  } catch (const ir::TargetError& e) {
    throw ConfigError(FieldError(text, format, name, "target", e.what()));
  }
  if (p.cores() < 0) throw ConfigError(FieldError(text, format, name, "cores", "negative"));
  if (target.kind == ir::Target::Kind::kLLVM && target.num_cores > 0 && p.cores() > 0 &&
      target.num_cores != p.cores()) {
    throw ConfigError(FieldError(text, format, name, "cores",
                                 std::to_string(p.cores()) + " but the target says -num-cores=" +
                                     std::to_string(target.num_cores)));
  }
  for (const char* field : {"peak_fp32_gflops", "memory_bandwidth_gbs"}) {
    const double v =
        std::string(field) == "peak_fp32_gflops" ? p.peak_fp32_gflops() : p.memory_bandwidth_gbs();
    if (!std::isfinite(v) || v < 0)
      throw ConfigError(FieldError(text, format, name, field, "must be >= 0"));
  }
  return p;
}

v1::SearchPreset ParseSearchPreset(std::string_view text, ConfigFormat format,
                                   const std::string& name) {
  v1::SearchPreset p;
  ParseConfigText(text, format, name, &p);
  CheckName(p, text, format, name);
  OneOf(text, format, name, "strategy", p.strategy(), {"evolutionary", "replay"});
  OneOf(text, format, name, "cost_model", p.cost_model(), {"xgb", "random"});
  OneOf(text, format, name, "task_scheduler", p.task_scheduler(), {"gradient", "round-robin"});
  if (p.trials() < 0 || p.trials() > 100000000) {
    throw ConfigError(FieldError(text, format, name, "trials",
                                 std::to_string(p.trials()) + "; 1 to 1e8 (0: default)"));
  }
  if (p.trials_per_task() < 0 || p.trials_per_task() > 100000000) {
    throw ConfigError(FieldError(text, format, name, "trials_per_task",
                                 std::to_string(p.trials_per_task()) + "; 1 to 1e8 (0: default)"));
  }
  if (p.trials_per_iter() < 0 || p.trials_per_iter() > 100000) {
    throw ConfigError(
        FieldError(text, format, name, "trials_per_iter",
                   std::to_string(p.trials_per_iter()) + "; 1 to 100000 (0: default)"));
  }
  if (p.has_timing()) {
    try {
      rpc::FromProto(p.timing());
    } catch (const std::invalid_argument& e) {
      // "timing.number 0 (1 to 2^30)": the field path is the first word.
      const std::string what = e.what();
      throw ConfigError(FieldError(text, format, name, what.substr(0, what.find(' ')), what));
    }
  }
  return p;
}

v1::TargetPreset LoadTargetPreset(const std::string& path) {
  return ParseTargetPreset(ReadConfigText(path), FormatOfPath(path), path);
}

v1::SearchPreset LoadSearchPreset(const std::string& path) {
  return ParseSearchPreset(ReadConfigText(path), FormatOfPath(path), path);
}

std::string CheckConfigFile(const std::string& path, std::optional<ConfigKind> kind) {
  if (!kind) kind = KindOfPath(path);
  if (!kind) {
    throw ConfigError(path +
                      ": cannot tell what kind of config this is from its folder "
                      "(targets/, search/ or jobs/); give --kind target|search|job");
  }
  switch (*kind) {
    case ConfigKind::kTargetPreset: {
      v1::TargetPreset p = LoadTargetPreset(path);
      return "target preset '" + p.target() + "'" +
             (p.cores() > 0 ? ", " + std::to_string(p.cores()) + " cores" : "");
    }
    case ConfigKind::kSearchPreset: {
      v1::SearchPreset p = LoadSearchPreset(path);
      return "search preset: " +
             (p.strategy().empty() ? std::string("default strategy") : p.strategy()) +
             (p.trials() > 0 ? ", " + std::to_string(p.trials()) + " trials" : "");
    }
    case ConfigKind::kJob: {
      // The job schema through this file's parser, so that its errors carry
      // the line of the field as the presets' do; then the farm's own checks
      // (rpc/farm/job_file.h), whose messages start with the field's path.
      const std::string text = ReadConfigText(path);
      const ConfigFormat format = FormatOfPath(path);
      v1::TuningJob job;
      ParseConfigText(text, format, path, &job);
      try {
        rpc::farm::ValidateJob(job);
      } catch (const rpc::farm::JobFileError& e) {
        const std::string what = e.what();
        const size_t end = what.find_first_of(": ");
        const std::string rest = end != std::string::npos && what.compare(end, 2, ": ") == 0
                                     ? what.substr(end + 2)
                                     : what;
        throw ConfigError(FieldError(text, format, path, what.substr(0, end), rest));
      }
      return "job file: " + std::to_string(job.workloads_size()) + " workload(s), " +
             std::to_string(job.trials()) + " trials";
    }
  }
  return "";
}

std::string FindPreset(const std::string& name_or_path, const std::string& subdir,
                       const std::vector<std::string>& config_dirs, const std::string& ext) {
  std::error_code ec;
  if (fs::is_regular_file(name_or_path, ec)) return name_or_path;
  const bool looks_like_path =
      name_or_path.find('/') != std::string::npos || fs::path(name_or_path).has_extension();
  std::string looked;
  std::set<std::string> known;
  for (const std::string& dir : config_dirs) {
    const fs::path folder = fs::path(dir) / subdir;
    if (!looks_like_path) {
      const fs::path candidate = folder / (name_or_path + ext);
      if (fs::is_regular_file(candidate, ec)) return candidate.string();
    }
    looked += (looked.empty() ? "" : ", ") + folder.string();
    if (fs::is_directory(folder, ec)) {
      for (const auto& entry : fs::directory_iterator(folder, ec)) {
        if (entry.path().extension() == ext) known.insert(entry.path().stem().string());
      }
    }
  }
  const std::string what = subdir == "targets"  ? "target preset"
                           : subdir == "models" ? "model"
                                                : subdir + " preset";
  std::string msg = "no " + what + " '" + name_or_path + "'";
  msg += looks_like_path
             ? " (no such file)"
             : " (looked in " + (looked.empty() ? std::string("no folder") : looked) + ")";
  if (!known.empty()) {
    msg += "; known:";
    for (const std::string& k : known) msg += " " + k;
  }
  throw ConfigError(msg);
}

std::vector<std::string> ListPresets(const std::string& subdir,
                                     const std::vector<std::string>& config_dirs,
                                     const std::string& ext) {
  std::vector<std::string> files;
  std::set<std::string> seen;
  for (const std::string& dir : config_dirs) {
    std::error_code ec;
    const fs::path folder = fs::path(dir) / subdir;
    if (!fs::is_directory(folder, ec)) continue;
    std::set<fs::path> here;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
      if (entry.path().extension() == ext && entry.is_regular_file(ec)) here.insert(entry.path());
    }
    for (const fs::path& p : here) {
      if (seen.insert(p.stem().string()).second) files.push_back(p.string());
    }
  }
  return files;
}

}  // namespace kiln::config
