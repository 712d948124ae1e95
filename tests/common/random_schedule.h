// One random schedule primitive on a random block of a schedule, shared by
// the tests that check programs under random schedules: the schedule property
// test (structural primitives, kStructuralSteps) and lowering / the CPU
// backend (kLoweringSteps: also parallel / vectorize / unroll, storage
// alignment, auto-unroll requests and per-iteration caches under a parallel
// loop).
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

// What RandomStep may do. A kind listed twice in a menu is drawn twice as often.
enum class StepKind {
  kSplit,             // perfect, or imperfect (a predicate)
  kReorder,           // a random subset of the block's loops
  kFuse,              // two adjacent loops
  kCacheRead,
  kCacheWrite,
  kComputeAt,
  kReverseComputeAt,
  kComputeInline,
  kReverseComputeInline,
  kRFactor,
  kDecomposeReduction,
  kParallel,
  kVectorize,
  kUnroll,
  kStorageAlign,      // padded strides on what the block writes
  kAutoUnroll,        // MetaSchedule-style auto-unroll request on an outer loop
  kParallelCache,     // a per-iteration cache under a parallel loop
};

// The primitives the schedule property test is about (issue: split, reorder,
// fuse, caches, compute-at both ways, inlining both ways, rfactor, decompose).
inline const std::vector<StepKind> kStructuralSteps = {
    StepKind::kSplit,          StepKind::kReorder,          StepKind::kFuse,
    StepKind::kCacheRead,      StepKind::kCacheWrite,       StepKind::kComputeAt,
    StepKind::kReverseComputeAt, StepKind::kComputeInline,  StepKind::kReverseComputeInline,
    StepKind::kRFactor,        StepKind::kDecomposeReduction};

// What lowering and code generation must handle, loop kinds included.
inline const std::vector<StepKind> kLoweringSteps = {
    StepKind::kSplit,         StepKind::kSplit,        StepKind::kReorder,
    StepKind::kFuse,          StepKind::kCacheRead,    StepKind::kCacheWrite,
    StepKind::kComputeAt,     StepKind::kReverseComputeAt, StepKind::kDecomposeReduction,
    StepKind::kParallel,      StepKind::kVectorize,    StepKind::kUnroll,
    StepKind::kStorageAlign,  StepKind::kAutoUnroll,   StepKind::kParallelCache,
    StepKind::kParallelCache};

// One random primitive drawn from `menu`, cache scopes drawn from `scopes`;
// throws ScheduleError when it refuses.
inline void RandomStep(Schedule& sch, RandomEngine& rng, const std::vector<StepKind>& menu = kLoweringSteps,
                       const std::vector<std::string>& scopes = {"global", "local"}) {
  const std::vector<std::string> names = BlockNames(sch);
  BlockRV block = sch.GetBlock(Pick(rng, names));
  std::vector<LoopRV> loops = sch.GetLoops(block);
  auto other_loop = [&]() -> LoopRV {
    std::vector<LoopRV> all = sch.GetLoops(sch.GetBlock(Pick(rng, names)));
    if (all.empty()) throw ScheduleError("random step", "no loop to pick");
    return Pick(rng, all);
  };
  switch (Pick(rng, menu)) {
    case StepKind::kParallelCache: {
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
    case StepKind::kSplit: {
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
    case StepKind::kReorder: {
      if (loops.size() < 2) return;
      std::vector<int64_t> idx = rng.SampleWithoutReplacement(static_cast<int64_t>(loops.size()),
                                                              std::min<int64_t>(3, loops.size()));
      std::vector<LoopRV> order;
      for (int64_t i : idx) order.push_back(loops[i]);
      sch.Reorder(order);
      return;
    }
    case StepKind::kFuse: {
      if (loops.size() < 2) return;
      int64_t i = rng.SampleInt(0, static_cast<int64_t>(loops.size()) - 1);
      sch.Fuse({loops[i], loops[i + 1]});
      return;
    }
    case StepKind::kCacheRead: {
      int reads = static_cast<int>(sch.Get(block).reads.size());
      if (reads == 0) return;
      sch.CacheRead(block, static_cast<int>(rng.SampleInt(0, reads)), Pick(rng, scopes));
      return;
    }
    case StepKind::kCacheWrite: {
      int writes = static_cast<int>(sch.Get(block).writes.size());
      sch.CacheWrite(block, static_cast<int>(rng.SampleInt(0, writes)), Pick(rng, scopes));
      return;
    }
    case StepKind::kComputeAt:
      sch.ComputeAt(block, other_loop(), rng.SampleInt(0, 2) == 1);
      return;
    case StepKind::kReverseComputeAt:
      sch.ReverseComputeAt(block, other_loop(), rng.SampleInt(0, 2) == 1);
      return;
    case StepKind::kComputeInline:
      sch.ComputeInline(block);
      return;
    case StepKind::kReverseComputeInline:
      sch.ReverseComputeInline(block);
      return;
    case StepKind::kRFactor:
      if (loops.empty()) return;
      sch.RFactor(Pick(rng, loops), static_cast<int>(rng.SampleInt(0, 3)));
      return;
    case StepKind::kDecomposeReduction:
      if (loops.empty()) return;
      sch.DecomposeReduction(block, Pick(rng, loops));
      return;
    case StepKind::kParallel:
      if (loops.empty()) return;
      sch.Parallel(Pick(rng, loops));
      return;
    case StepKind::kVectorize:
      if (loops.empty()) return;
      sch.Vectorize(Pick(rng, loops));
      return;
    case StepKind::kUnroll:
      if (loops.empty()) return;
      sch.Unroll(Pick(rng, loops));
      return;
    case StepKind::kStorageAlign: {
      if (sch.Get(block).writes.empty()) return;
      int ndim = static_cast<int>(sch.Get(block).writes[0].buffer.ndim());
      if (ndim < 2) return;
      sch.StorageAlign(block, 0, static_cast<int>(rng.SampleInt(0, ndim - 1)),
                       static_cast<int>(Pick(rng, std::vector<int64_t>{4, 8})),
                       static_cast<int>(rng.SampleInt(0, 4)));
      return;
    }
    case StepKind::kAutoUnroll:
      if (loops.empty()) return;
      sch.Annotate(loops[0], "pragma_auto_unroll_max_step", Pick(rng, std::vector<int64_t>{16, 64}));
      sch.Annotate(loops[0], "pragma_unroll_explicit", rng.SampleInt(0, 2));
      return;
  }
}

}  // namespace kiln::testing
