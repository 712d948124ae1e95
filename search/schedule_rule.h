// Schedule rules: each looks at one block of a schedule and returns the
// schedules it turns it into — itself unchanged when the rule does not apply,
// several when the rule fans out (each becomes a separate design-space
// branch). Rules only record primitives and samples into the schedule's
// trace; what they defer to postprocessors travels as block annotations
// (annotations.h).
//
// One rule per file in schedule_rule/; the parameters and their defaults are
// TVM's (docs/ARCHITECTURE.md §4).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/schedule/schedule.h"

namespace kiln::search {

struct TuneContext;

class ScheduleRule {
 public:
  virtual ~ScheduleRule() = default;
  virtual std::string Name() const = 0;
  // Reads what the rule needs from the task (core count, ...). Called once
  // before the first Apply.
  virtual void Initialize(const TuneContext& /*ctx*/) {}
  // Never throws for a block the rule does not apply to.
  virtual std::vector<ir::Schedule> Apply(ir::Schedule sch, ir::BlockRV block) = 0;
};
using ScheduleRulePtr = std::shared_ptr<ScheduleRule>;

struct AutoInlineConfig {
  bool into_producer = false;
  bool into_consumer = true;
  bool inline_const_tensor = true;
  bool disallow_if_then_else = true;
  bool require_injective = true;
  bool require_ordered = true;
  std::vector<std::string> disallow_op = {"exp"};  // CallOpName spellings
};

// Where a tiled block's result is staged: "no", "may" (branches with and
// without the cache) or "must"; at which tile levels (1-based); in which scope.
struct ReuseConfig {
  std::string req = "no";
  std::vector<int> levels;
  std::string scope = "global";
};

struct MultiLevelTilingConfig {
  std::string structure = "SSRSRS";
  int max_innermost_factor = 64;
  ReuseConfig reuse_write = {"may", {1, 2}, "global"};
  // GPU: the first levels are fused and bound to these thread axes; inputs
  // are staged in `reuse_read` caches fetched cooperatively, `vector_load_lens`
  // elements per thread at a time (sampled).
  std::vector<std::string> tile_binds;
  ReuseConfig reuse_read = {"no", {}, "global"};
  std::vector<int64_t> vector_load_lens;
  // CPU: the input that the innermost spatial axis walks contiguously and
  // some other spatial axis reuses (GEMM's B, a convolution's weights) may be
  // packed into a compact copy at the end of a tile level, so the register
  // tile streams rows that are adjacent in memory rather than a buffer row
  // apart (configs/traces/README.md: the copy is what lets the hand GMM
  // schedule reach OpenBLAS). A Kiln branch: TVM's CPU rules never pack.
  ReuseConfig pack_read = {"may", {1}, "global"};
};

struct ParallelizeVectorizeUnrollConfig {
  int max_jobs_per_core = 16;     // -1: no parallel annotation
  int max_vectorize_extent = 64;  // -1: no vectorize annotation
  std::vector<int64_t> unroll_max_steps = {0, 16, 64, 512};
  bool unroll_explicit = true;
};

ScheduleRulePtr MakeInlineConstantScalars();
ScheduleRulePtr MakeAutoInline(AutoInlineConfig config = {});
ScheduleRulePtr MakeAddRFactor(int max_jobs_per_core = 16, int max_innermost_factor = 64);
ScheduleRulePtr MakeMultiLevelTiling(MultiLevelTilingConfig config = {});
ScheduleRulePtr MakeParallelizeVectorizeUnroll(ParallelizeVectorizeUnrollConfig config = {});
ScheduleRulePtr MakeRandomComputeLocation();
// GPU rules (docs/ARCHITECTURE.md §4).
ScheduleRulePtr MakeCrossThreadReduction(std::vector<int64_t> thread_extents);
ScheduleRulePtr MakeAutoBind(int64_t max_threadblocks, std::vector<int64_t> thread_extents,
                             int64_t max_threads_per_block = -1);

// TVM's DefaultLLVM list, in its order (ApplyCustomRule aside: Kiln has no
// registry of custom block schedules).
std::vector<ScheduleRulePtr> DefaultLLVMRules();
// TVM's DefaultCUDA list (MultiLevelTiling before AutoInline on GPU).
std::vector<ScheduleRulePtr> DefaultCUDARules();

}  // namespace kiln::search
