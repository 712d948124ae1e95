// MultiLevelTilingTensorCore: fp16 GEMM blocks on tensor cores (wmma), for
// cuda targets of sm_80 and later; a no-op elsewhere
// (multi_level_tiling_tensor_core.cc says what it builds).
#pragma once

#include "search/schedule_rule.h"

namespace kiln::search {

ScheduleRulePtr MakeMultiLevelTilingTensorCore();

}  // namespace kiln::search
