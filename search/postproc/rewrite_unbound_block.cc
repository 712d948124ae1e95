// RewriteUnboundBlock (GPU): a block the rules left without a blockIdx and a
// threadIdx loop above it gets bound like AutoBind binds, with as many
// threads as fit (no sampling: a postprocessor must not add decisions).
// Blocks nested in other blocks go where their outer block goes.
#include <algorithm>

#include "ir/schedule/stmt_path.h"
#include "search/postproc.h"
#include "search/thread_bind.h"
#include "search/tune_context.h"

namespace kiln::search {
namespace {

class RewriteUnboundBlock : public Postproc {
 public:
  explicit RewriteUnboundBlock(int64_t max_threadblocks) : max_threadblocks_(max_threadblocks) {}
  std::string Name() const override { return "RewriteUnboundBlock"; }
  void Initialize(const TuneContext& ctx) override {
    max_threads_ = ctx.target.MaxThreadsPerBlock();
  }
  bool Apply(ir::Schedule* sch, std::string* why) override {
    std::vector<std::string> names;
    for (const auto* r : ir::AllBlockRealizes(sch->func())) names.push_back(r->block->name);
    for (const std::string& name : names) {
      if (name == "root" || !sch->HasBlock(name)) continue;
      try {
        ir::BlockRV b = sch->GetBlock(name);
        // A block nested in another (the inner block of a blockized or
        // tensorized one) runs where its outer block runs; as in TVM, only
        // the outermost blocks below the root are bound.
        int blocks_above = 0;
        for (const ir::Stmt& s : sch->PathOf(b)) blocks_above += s.as<ir::BlockRealizeNode>() != nullptr;
        if (blocks_above > 2) continue;
        BindBlockThreadIdx(*sch, b, max_threadblocks_, max_threads_,
                           [&](int64_t max_extent) { return ir::Factor{max_extent}; });
      } catch (const ir::ScheduleError& e) {
        if (why) *why = "block '" + name + "': " + e.what();
        return false;
      }
    }
    return true;
  }

 private:
  int64_t max_threadblocks_;
  int64_t max_threads_ = 1024;
};

}  // namespace

PostprocPtr MakeRewriteUnboundBlock(int64_t max_threadblocks) {
  return std::make_shared<RewriteUnboundBlock>(max_threadblocks);
}

}  // namespace kiln::search
