// VerifyGPUCode (GPU): rejects a candidate whose thread extents fall outside
// what MultiLevelTiling asked for (its thread_extent_low/high_inclusive
// annotations), or that does not lower for the target, or whose kernels
// exceed the target's limits (threads and shared memory per block,
// ir/transform/verify_gpu_code.h). It lowers a copy with the cuda pipeline.
#include "ir/error.h"
#include "ir/schedule/stmt_path.h"
#include "ir/transform/lower.h"
#include "ir/transform/verify_gpu_code.h"
#include "ir/transform/verify_lowered.h"
#include "search/annotations.h"
#include "search/postproc.h"
#include "search/rule_analysis.h"
#include "search/tune_context.h"

namespace kiln::search {
namespace {

class VerifyGPUCode : public Postproc {
 public:
  std::string Name() const override { return "VerifyGPUCode"; }
  void Initialize(const TuneContext& ctx) override { target_ = ctx.target; }
  bool Apply(ir::Schedule* sch, std::string* why) override {
    if (!CheckThreadExtents(*sch, why)) return false;
    ir::PrimFunc lowered;
    try {
      lowered = ir::transform::Lower(sch->func(), target_);
    } catch (const ir::IRError& e) {
      if (why) *why = e.what();
      return false;
    }
    std::vector<std::string> issues = ir::transform::VerifyLowered(lowered);
    std::vector<std::string> gpu =
        ir::transform::VerifyGPUCode(lowered, ir::transform::GpuLimits::FromTarget(target_));
    issues.insert(issues.end(), gpu.begin(), gpu.end());
    if (issues.empty()) return true;
    if (why) *why = issues[0];
    return false;
  }

 private:
  static bool CheckThreadExtents(const ir::Schedule& sch, std::string* why) {
    for (const auto* r : ir::AllBlockRealizes(sch.func())) {
      const ir::BlockNode& b = *r->block.get();
      auto low = IntAnn(b.annotations, ann::kThreadExtentLow);
      auto high = IntAnn(b.annotations, ann::kThreadExtentHigh);
      if (!low && !high) continue;
      int64_t threads = 1;
      for (const ir::ForNode* f : ir::LoopsAbove(*ir::FindBlockPath(sch.func(), b.name))) {
        if (f->for_kind != ir::ForKind::kThreadBinding || f->thread_tag.rfind("threadIdx", 0) != 0) {
          continue;
        }
        const auto* imm = f->extent.as<ir::IntImmNode>();
        if (imm == nullptr) {
          if (why) *why = "block '" + b.name + "': a thread extent is not constant";
          return false;
        }
        threads *= imm->value;
      }
      if ((low && threads < *low) || (high && threads > *high)) {
        if (why) {
          *why = "block '" + b.name + "': " + std::to_string(threads) +
                 " threads, outside the tiling's range [" + std::to_string(low.value_or(1)) +
                 ", " + std::to_string(high.value_or(threads)) + "]";
        }
        return false;
      }
    }
    return true;
  }

  ir::Target target_;
};

}  // namespace

PostprocPtr MakeVerifyGPUCode() { return std::make_shared<VerifyGPUCode>(); }

}  // namespace kiln::search
