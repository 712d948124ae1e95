// RewriteReductionBlock: every block that still has an init gets it split off
// (decompose_reduction) just above its first loop that is not data-parallel,
// so that code generation sees a plain init nest and a plain update nest.
#include <set>

#include "ir/schedule/stmt_path.h"
#include "search/postproc.h"
#include "search/rule_analysis.h"

namespace kiln::search {
namespace {

class RewriteReductionBlock : public Postproc {
 public:
  std::string Name() const override { return "RewriteReductionBlock"; }
  bool Apply(ir::Schedule* sch, std::string* why) override {
    // Decomposing one block can leave others (the init block itself has
    // none), so look again until nothing is left to do.
    std::set<std::string> skipped;
    for (;;) {
      int rewritten = 0;
      for (const auto* r : ir::AllBlockRealizes(sch->func())) {
        const ir::BlockNode& b = *r->block.get();
        if (!b.init || skipped.count(b.name)) continue;
        std::string name = b.name;
        ir::StmtPath path = *ir::FindBlockPath(sch->func(), name);
        std::vector<const ir::ForNode*> loops = ir::LoopsAbove(path);
        // A reduction across GPU threads keeps its init: lowering
        // (lower_cross_thread_reduction.cc) needs the whole reduction.
        bool cross_thread = false;
        for (const ir::ForNode* f : loops) {
          cross_thread = cross_thread || (f->for_kind == ir::ForKind::kThreadBinding &&
                                          LoopIterType(f) != ir::IterType::kDataPar);
        }
        if (cross_thread) {
          skipped.insert(name);
          continue;
        }
        int point = -1;
        for (size_t i = 0; i < loops.size(); ++i) {
          if (LoopIterType(loops[i]) != ir::IterType::kDataPar) {
            point = static_cast<int>(i);
            break;
          }
        }
        if (point == -1) {
          skipped.insert(name);
          continue;
        }
        try {
          ir::BlockRV block = sch->GetBlock(name);
          std::vector<ir::LoopRV> loop_rvs = sch->GetLoops(block);
          sch->DecomposeReduction(block, loop_rvs[point]);
        } catch (const ir::ScheduleError& e) {
          if (why) *why = "block '" + name + "': " + e.what();
          return false;
        }
        ++rewritten;
        break;  // the tree changed: walk it afresh
      }
      if (rewritten == 0) return true;
    }
  }
};

}  // namespace

PostprocPtr MakeRewriteReductionBlock() { return std::make_shared<RewriteReductionBlock>(); }

}  // namespace kiln::search
