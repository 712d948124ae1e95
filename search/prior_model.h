// Which cost model a `kiln tune` run, a farm job and bench/search_bench
// start from (--prior-model, XGBModel::SetPrior). By default ("auto") a run
// starts from a model shipped in configs/models/ when one suits the tuning
// target: trained on a CPU with the same vector units
// (codegen::SameVectorUnits). On this project's AVX-512 machine the shipped
// model took C2D:0 and GMM:3 runs out of their poor basins, and misled some
// SFM:0 runs (configs/models/README.md and docs/ARCHITECTURE.md §8 have the
// figures); on a CPU of other vector units it would rank 16-lane schedules
// first, so it is not used there, and the run starts from nothing as TVM's
// do.
#pragma once

#include <string>
#include <vector>

#include "ir/target.h"

namespace kiln::search {

// "auto" and "none" are the two values of --prior-model that name no file.
inline constexpr const char* kAutoPriorModel = "auto";
inline constexpr const char* kNoPriorModel = "none";

struct AutoPrior {
  std::string path;  // the chosen model file; empty: none suits
  // For the log: why that model, or why none (each refused file with its
  // reason).
  std::string reason;
};

// The first of `model_files` (in order) whose recorded training target has
// `target`'s vector units. A file that is not a usable model, or that does
// not record its target (written before the field existed), is passed over
// with its reason.
AutoPrior ChooseAutoPrior(const std::vector<std::string>& model_files, const ir::Target& target);

}  // namespace kiln::search
