// Kiln's three kinds of config file and their checks beyond the schema:
// target presets (configs/targets/*.json, kiln.v1.TargetPreset), search
// presets (configs/search/*.json, kiln.v1.SearchPreset) and job files
// (configs/jobs/, kiln.v1.TuningJob through rpc/farm/job_file.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config_file.h"
#include "kiln/v1/config.pb.h"

namespace kiln::config {

enum class ConfigKind { kTargetPreset, kSearchPreset, kJob };

std::string KindName(ConfigKind kind);  // "target preset", "search preset", "job file"
// "target" / "search" / "job" -> the kind; throws ConfigError otherwise.
ConfigKind ParseKind(const std::string& word);
// The kind a file's folder says: .../targets/x.json, .../search/x.json,
// .../jobs/x.json; nullopt for any other folder.
std::optional<ConfigKind> KindOfPath(const std::string& path);

// Parse and check; throw ConfigError naming file, line and field.
v1::TargetPreset LoadTargetPreset(const std::string& path);
v1::SearchPreset LoadSearchPreset(const std::string& path);
// The same from text; `name` is the file name errors use (its stem must
// match the preset's `name` when that is set).
v1::TargetPreset ParseTargetPreset(std::string_view text, ConfigFormat format,
                                   const std::string& name);
v1::SearchPreset ParseSearchPreset(std::string_view text, ConfigFormat format,
                                   const std::string& name);

// Checks one file of the given kind (or the kind its folder says); returns a
// one-line summary of what it holds. Throws ConfigError.
std::string CheckConfigFile(const std::string& path, std::optional<ConfigKind> kind);

// A preset given on the command line: an existing file as it is, else NAME
// looked up as DIR/<subdir>/NAME<ext> in each of `config_dirs` in order
// (".json" for presets, ".model" for the cost models of configs/models/).
// Throws ConfigError listing where it looked and what presets exist.
std::string FindPreset(const std::string& name_or_path, const std::string& subdir,
                       const std::vector<std::string>& config_dirs,
                       const std::string& ext = ".json");

// Every preset file of `subdir` with `ext` in `config_dirs`: a folder's
// files in name order, the folders in the order given, and a name found in
// an earlier folder hides the same name in later ones (as FindPreset
// resolves names).
std::vector<std::string> ListPresets(const std::string& subdir,
                                     const std::vector<std::string>& config_dirs,
                                     const std::string& ext = ".json");

}  // namespace kiln::config
