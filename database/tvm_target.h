// TVM's target config (the JSON object MetaSchedule stores with a record,
// `Target.export()`) to and from Kiln's target (ir/target.h).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "ir/target.h"

namespace kiln::database {

// Maps {"kind": "llvm", "mcpu": ..., "mattr": [...], "num-cores": N} and
// {"kind": "cuda", "arch": "sm_90", "max_threads_per_block": ...}. TVM's
// build-specific triple ("x86_64-conda-linux-gnu" from pip wheels) is left
// out: Kiln's default triple is the host's. Throws ir::TargetError naming
// the kind or key it cannot map.
ir::Target TargetFromTvm(const nlohmann::json& config);

// The config TVM reads back with `tvm.target.Target(config)`.
nlohmann::json TargetToTvm(const ir::Target& target);

}  // namespace kiln::database
