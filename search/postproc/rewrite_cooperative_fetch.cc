// RewriteCooperativeFetch (GPU): a cache-read block MultiLevelTiling marked
// meta_schedule.cooperative_fetch = lanes is fetched by all threads of the
// block together. Its fused innermost loop is split into [rest, (ty,) tx,
// (lanes)] with tx / ty the threadIdx extents bound before it in the trace,
// and the lanes vectorized (1 when they do not divide the extent or the block
// moves values wider than 4 bytes). An Annotate of warp_execution before it
// (MultiLevelTilingTensorCore's) makes tx the warp size, as in TVM.
#include <algorithm>
#include <functional>

#include "ir/op.h"
#include "search/annotations.h"
#include "search/postproc.h"
#include "search/tune_context.h"

namespace kiln::search {
namespace {

int64_t ConstExtent(const ir::ForNode& f) {
  const auto* imm = f.extent.as<ir::IntImmNode>();
  return imm ? imm->value : -1;
}

int MaxDtypeBytes(const ir::BlockNode& b) {
  int bytes = 0;
  for (const auto* regions : {&b.reads, &b.writes}) {
    for (const auto& r : *regions) bytes = std::max(bytes, (r.buffer.dtype().bits() + 7) / 8);
  }
  return bytes;
}

class RewriteCooperativeFetch : public Postproc {
 public:
  std::string Name() const override { return "RewriteCooperativeFetch"; }
  void Initialize(const TuneContext& ctx) override { warp_size_ = ctx.target.WarpSize(); }
  bool Apply(ir::Schedule* sch, std::string* why) override {
    int64_t tx = -1, ty = -1;
    std::vector<std::function<void()>> tasks;
    for (const ir::Instruction& inst : sch->trace().insts()) {
      if (inst.kind == "Bind" && inst.inputs.size() == 1 && inst.attrs.size() == 1) {
        const std::string axis = inst.attrs[0].get<std::string>();
        if (axis != "threadIdx.x" && axis != "threadIdx.y") continue;
        int64_t e = -1;
        try {
          e = ConstExtent(sch->Get(ir::LoopRV{inst.inputs[0].rv.id}));
        } catch (const std::exception&) {
          continue;  // the loop is gone; its extent no longer matters
        }
        (axis == "threadIdx.x" ? tx : ty) = e;
      } else if (inst.kind == "Annotate" && inst.attrs.size() == 1 &&
                 inst.attrs[0].get<std::string>() == ann::kWarpExecution) {
        tx = warp_size_;
      } else if (inst.kind == "Annotate" && inst.attrs.size() == 1 &&
                 inst.attrs[0].get<std::string>() == ann::kCooperativeFetch &&
                 !inst.inputs.empty() && inst.inputs[0].rv.kind == ir::RVKind::kBlock) {
        ir::BlockRV block{inst.inputs[0].rv.id};
        tasks.push_back([sch, block, tx, ty] {
          const ir::BlockNode& b = sch->Get(block);
          auto it = b.annotations.find(ann::kCooperativeFetch);
          int64_t lanes = 1;
          if (it != b.annotations.end()) ir::AsConstInt(it->second, &lanes);
          if (MaxDtypeBytes(b) > 4) lanes = 1;
          sch->Unannotate(block, ann::kCooperativeFetch);
          ir::LoopRV fused = sch->GetLoops(block).back();
          int64_t extent = ConstExtent(sch->Get(fused));
          if (extent < 0 || tx < 0) return;
          if (lanes < 1 || extent % lanes != 0) lanes = 1;
          std::vector<ir::Factor> factors{std::monostate{}};
          if (ty != -1) factors.push_back(ty);
          factors.push_back(tx);
          if (lanes > 1) factors.push_back(lanes);
          std::vector<ir::LoopRV> parts = sch->Split(fused, factors);
          size_t k = 1;
          if (ty != -1) sch->Bind(parts[k++], "threadIdx.y");
          sch->Bind(parts[k++], "threadIdx.x");
          if (lanes > 1) sch->Vectorize(parts[k]);
        });
      }
    }
    try {
      for (auto& t : tasks) t();
    } catch (const ir::ScheduleError& e) {
      if (why) *why = e.what();
      return false;
    }
    return true;
  }

 private:
  int64_t warp_size_ = 32;
};

}  // namespace

PostprocPtr MakeRewriteCooperativeFetch() { return std::make_shared<RewriteCooperativeFetch>(); }

}  // namespace kiln::search
