// One random schedule primitive on a random block of a schedule, shared by
// the tests that check programs under random schedules (lowering, the CPU
// backend): splits (perfect and imperfect), reorders, fuses, caches,
// compute-at both ways, reduction decomposition, parallel / vectorize /
// unroll, storage alignment and auto-unroll requests, and per-iteration
// caches under a parallel loop.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "ir/schedule/random_engine.h"
#include "ir/schedule/schedule.h"

namespace kiln::testing {

using namespace ir;  // NOLINT: schedule primitives and IR nodes

inline std::vector<std::string> BlockNames(const Schedule& sch) {
  std::vector<std::string> names;
  std::function<void(const Stmt&)> walk = [&](const Stmt& s) {
    if (!s.defined()) return;
    if (const auto* f = s.as<ForNode>()) return walk(f->body);
    if (const auto* q = s.as<SeqStmtNode>()) {
      for (const auto& x : q->seq) walk(x);
      return;
    }
    if (const auto* i = s.as<IfThenElseNode>()) {
      walk(i->then_case);
      walk(i->else_case);
      return;
    }
    if (const auto* r = s.as<BlockRealizeNode>()) {
      if (r->block->name != "root") names.push_back(r->block->name);
      walk(r->block->body);
    }
  };
  walk(sch.func().body);
  return names;
}

template <typename T>
inline const T& Pick(RandomEngine& rng, const std::vector<T>& v) {
  return v[rng.SampleInt(0, static_cast<int64_t>(v.size()))];
}

// One random primitive; throws ScheduleError when it refuses.
inline void RandomStep(Schedule& sch, RandomEngine& rng) {
  const std::vector<std::string> names = BlockNames(sch);
  BlockRV block = sch.GetBlock(Pick(rng, names));
  std::vector<LoopRV> loops = sch.GetLoops(block);
  const std::vector<std::string> scopes = {"global", "local"};
  auto other_loop = [&]() -> LoopRV {
    std::vector<LoopRV> all = sch.GetLoops(sch.GetBlock(Pick(rng, names)));
    if (all.empty()) throw ScheduleError("lower test", "no loop to pick");
    return Pick(rng, all);
  };
  switch (rng.SampleInt(0, 16)) {
    case 14:
    case 15: {  // a per-iteration cache under a parallel loop
      if (loops.empty()) return;
      LoopRV outer = loops[rng.SampleInt(0, std::min<int64_t>(2, loops.size()))];
      if (rng.SampleInt(0, 2) == 0) {
        BlockRV cache = sch.CacheWrite(block, 0, "local");
        sch.ReverseComputeAt(cache, outer, true);
      } else {
        int reads = static_cast<int>(sch.Get(block).reads.size());
        if (reads == 0) return;
        BlockRV cache =
            sch.CacheRead(block, static_cast<int>(rng.SampleInt(0, reads)), "local");
        sch.ComputeAt(cache, outer, true);
      }
      sch.Parallel(sch.GetLoops(block)[0]);
      return;
    }
    case 0:
    case 1: {  // split: perfect, or imperfect (a predicate)
      if (loops.empty()) return;
      LoopRV l = Pick(rng, loops);
      if (rng.SampleInt(0, 2) == 0) {
        auto f = sch.SamplePerfectTile(l, static_cast<int>(rng.SampleInt(2, 4)), 16);
        sch.Split(l, std::vector<Factor>(f.begin(), f.end()));
      } else {
        sch.Split(l, {std::monostate{}, rng.SampleInt(2, 5)});
      }
      return;
    }
    case 2: {
      if (loops.size() < 2) return;
      std::vector<int64_t> idx = rng.SampleWithoutReplacement(static_cast<int64_t>(loops.size()),
                                                              std::min<int64_t>(3, loops.size()));
      std::vector<LoopRV> order;
      for (int64_t i : idx) order.push_back(loops[i]);
      sch.Reorder(order);
      return;
    }
    case 3: {
      if (loops.size() < 2) return;
      int64_t i = rng.SampleInt(0, static_cast<int64_t>(loops.size()) - 1);
      sch.Fuse({loops[i], loops[i + 1]});
      return;
    }
    case 4: {
      int reads = static_cast<int>(sch.Get(block).reads.size());
      if (reads == 0) return;
      sch.CacheRead(block, static_cast<int>(rng.SampleInt(0, reads)), Pick(rng, scopes));
      return;
    }
    case 5: {
      int writes = static_cast<int>(sch.Get(block).writes.size());
      sch.CacheWrite(block, static_cast<int>(rng.SampleInt(0, writes)), Pick(rng, scopes));
      return;
    }
    case 6:
      sch.ComputeAt(block, other_loop(), rng.SampleInt(0, 2) == 1);
      return;
    case 7:
      sch.ReverseComputeAt(block, other_loop(), rng.SampleInt(0, 2) == 1);
      return;
    case 8:
      if (loops.empty()) return;
      sch.DecomposeReduction(block, Pick(rng, loops));
      return;
    case 9:
      if (loops.empty()) return;
      sch.Parallel(Pick(rng, loops));
      return;
    case 10:
      if (loops.empty()) return;
      sch.Vectorize(Pick(rng, loops));
      return;
    case 11:
      if (loops.empty()) return;
      sch.Unroll(Pick(rng, loops));
      return;
    case 12: {  // padded strides on what the block writes
      if (sch.Get(block).writes.empty()) return;
      int ndim = static_cast<int>(sch.Get(block).writes[0].buffer.ndim());
      if (ndim < 2) return;
      sch.StorageAlign(block, 0, static_cast<int>(rng.SampleInt(0, ndim - 1)),
                       static_cast<int>(Pick(rng, std::vector<int64_t>{4, 8})),
                       static_cast<int>(rng.SampleInt(0, 4)));
      return;
    }
    default: {  // MetaSchedule-style auto-unroll request on an outer loop
      if (loops.empty()) return;
      sch.Annotate(loops[0], "pragma_auto_unroll_max_step", Pick(rng, std::vector<int64_t>{16, 64}));
      sch.Annotate(loops[0], "pragma_unroll_explicit", rng.SampleInt(0, 2));
      return;
    }
  }
}

}  // namespace kiln::testing
