// The cost model a bench's XGBoost model starts from, chosen as `kiln tune
// --prior-model` chooses (search/prior_model.h): "auto" (the default) is the
// first model of configs/models/ trained on a CPU with the target's vector
// units, "none" is none, anything else is a model file. Returns the file, or
// "" for none; prints the choice.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "config/presets.h"
#include "ir/target.h"
#include "search/prior_model.h"

namespace kiln::bench {

inline std::string ChoosePriorModelFile(const std::string& flag, const ir::Target& target) {
  if (flag == search::kNoPriorModel || flag.empty()) return "";
  if (flag != search::kAutoPriorModel) return flag;
  // The working directory's configs/ first, then the source tree's.
  const std::vector<std::string> dirs = {"configs", KILN_SOURCE_DIR "/configs"};
  const search::AutoPrior chosen =
      search::ChooseAutoPrior(config::ListPresets("models", dirs, ".model"), target);
  if (chosen.path.empty()) {
    std::printf("prior model: none (%s)\n", chosen.reason.c_str());
  } else {
    std::printf("prior model (auto): %s, %s\n", chosen.path.c_str(), chosen.reason.c_str());
  }
  return chosen.path;
}

}  // namespace kiln::bench
