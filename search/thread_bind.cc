#include "search/thread_bind.h"

#include <algorithm>
#include <limits>

#include "search/annotations.h"
#include "search/rule_analysis.h"

namespace kiln::search {
namespace {

bool SingleStmt(const ir::Stmt& s) {
  const auto* seq = s.as<ir::SeqStmtNode>();
  return seq == nullptr || seq->seq.size() == 1;
}

}  // namespace

ThreadScope ThreadScopeOf(ir::Schedule& sch, ir::BlockRV block) {
  ThreadScope t;
  for (ir::LoopRV l : sch.GetLoops(block)) {
    const ir::ForNode& f = sch.Get(l);
    if (f.for_kind != ir::ForKind::kThreadBinding) continue;
    if (f.thread_tag.rfind("blockIdx", 0) == 0) t.block_idx = true;
    if (f.thread_tag.rfind("threadIdx", 0) == 0) t.thread_idx = true;
  }
  return t;
}

void BindBlockThreadIdx(ir::Schedule& sch, ir::BlockRV block, int64_t max_threadblocks,
                        int64_t max_threads,
                        const std::function<ir::Factor(int64_t max_extent)>& get_factor) {
  if (IsRootBlock(sch, block) || HasAnn(sch.Get(block), ann::kTilingStructure)) return;
  std::vector<ir::LoopRV> loops = sch.GetLoops(block);
  const int n = static_cast<int>(loops.size());
  int multi_child = -1, spatial = -1;
  ThreadScope scope = ThreadScopeOf(sch, block);
  for (int i = 0; i < n; ++i) {
    const ir::ForNode& f = sch.Get(loops[i]);
    if (f.for_kind != ir::ForKind::kSerial && multi_child == -1) multi_child = i;
    if (!SingleStmt(f.body) && multi_child == -1) multi_child = i + 1;
    if (LoopIterType(&f) == ir::IterType::kDataPar && spatial == i - 1) spatial = i;
  }
  if (multi_child == -1) multi_child = n;
  if (scope.block_idx && scope.thread_idx) return;
  if (scope.block_idx) {
    throw ir::ScheduleError("BindBlockThreadIdx", "block '" + sch.NameOf(block) +
                            "' is under a blockIdx loop but no threadIdx loop");
  }
  if (scope.thread_idx) {
    // Threads are bound (a reduction across threads, say): the spatial
    // loops above the first thread loop become the blocks.
    int first_thread = 0;
    while (first_thread < n && !(sch.Get(loops[first_thread]).for_kind ==
                                     ir::ForKind::kThreadBinding &&
                                 sch.Get(loops[first_thread]).thread_tag.rfind("threadIdx", 0) == 0)) {
      ++first_thread;
    }
    int count = std::min({spatial + 1, first_thread, multi_child});
    ir::LoopRV outer;
    if (count <= 0) {
      outer = sch.AddUnitLoop(loops[0]);
    } else if (count == 1) {
      outer = loops[0];
    } else {
      outer = sch.Fuse({loops.begin(), loops.begin() + count});
    }
    sch.Bind(outer, "blockIdx.x");
    return;
  }
  ir::LoopRV fused;
  int last = std::min(spatial, multi_child - 1);
  if (last < 0) {
    // No leading spatial loop to bind: bind a new unit loop above the block.
    fused = sch.AddUnitLoop(n == 0 ? ir::BlockOrLoop{block} : ir::BlockOrLoop{loops[0]});
  } else if (last == 0) {
    fused = loops[0];
  } else {
    fused = sch.Fuse({loops.begin(), loops.begin() + last + 1});
  }
  int64_t extent = std::numeric_limits<int64_t>::max();
  if (const auto* imm = sch.Get(fused).extent.as<ir::IntImmNode>()) extent = imm->value;
  if (extent <= max_threadblocks * max_threads) {
    ir::Factor f = get_factor(std::min(extent, max_threads));
    std::vector<ir::LoopRV> parts = sch.Split(fused, {std::monostate{}, f});
    sch.Bind(parts[0], "blockIdx.x");
    sch.Bind(parts[1], "threadIdx.x");
  } else {
    std::vector<ir::LoopRV> parts =
        sch.Split(fused, {std::monostate{}, max_threadblocks, max_threads});
    sch.Reorder({parts[1], parts[2], parts[0]});
    sch.Bind(parts[1], "blockIdx.x");
    sch.Bind(parts[2], "threadIdx.x");
  }
}

}  // namespace kiln::search
