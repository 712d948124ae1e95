// The decisive lowering test: for every suite workload at reduced shapes,
// unscheduled and under random schedules, the lowered function computes what
// the block-form function computes, satisfies the lowered-form contract and
// prints and parses back.
#include <gtest/gtest.h>

#include <functional>
#include <iostream>

#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"
#include "lower_test_util.h"
#include "tests/common/reduced_suite.h"

namespace kiln::ir {
namespace {

using Case = kiln::testing::ReducedCase;
using kiln::testing::ReducedSuite;

std::vector<std::string> BlockNames(const Schedule& sch) {
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
const T& Pick(RandomEngine& rng, const std::vector<T>& v) {
  return v[rng.SampleInt(0, static_cast<int64_t>(v.size()))];
}

// One random primitive; throws ScheduleError when it refuses.
void RandomStep(Schedule& sch, RandomEngine& rng) {
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

// What a lowered program exercises, so the test can show the random
// schedules reach the interesting cases.
struct Features {
  int alloc_under_parallel = 0;  // an allocation scope inside a parallel loop
  int guarded = 0;               // an IfThenElse (predicate or init guard)
  int vectorized = 0;            // a vectorized loop survived legalization
  int unrolled = 0;              // a kUnrolled loop left for the backend
  int strided = 0;               // an allocation padded by storage_align
};

void Collect(const Stmt& s, bool under_parallel, Features* f, bool* seen_alloc_par,
             bool* seen_if, bool* seen_vec, bool* seen_unroll) {
  if (!s.defined()) return;
  if (const auto* l = s.as<ForNode>()) {
    *seen_vec |= l->for_kind == ForKind::kVectorized;
    *seen_unroll |= l->for_kind == ForKind::kUnrolled;
    return Collect(l->body, under_parallel || l->for_kind == ForKind::kParallel, f,
                   seen_alloc_par, seen_if, seen_vec, seen_unroll);
  }
  if (const auto* q = s.as<SeqStmtNode>()) {
    for (const auto& x : q->seq) Collect(x, under_parallel, f, seen_alloc_par, seen_if, seen_vec, seen_unroll);
    return;
  }
  if (const auto* i = s.as<IfThenElseNode>()) {
    *seen_if = true;
    Collect(i->then_case, under_parallel, f, seen_alloc_par, seen_if, seen_vec, seen_unroll);
    Collect(i->else_case, under_parallel, f, seen_alloc_par, seen_if, seen_vec, seen_unroll);
    return;
  }
  if (const auto* r = s.as<BlockRealizeNode>()) {
    *seen_alloc_par |= under_parallel && !r->block->alloc_buffers.empty();
    Collect(r->block->body, under_parallel, f, seen_alloc_par, seen_if, seen_vec, seen_unroll);
  }
}

void Count(const PrimFunc& lowered, const PrimFunc& scheduled, Features* f) {
  bool par = false, guard = false, vec = false, unroll = false;
  Collect(lowered.body, false, f, &par, &guard, &vec, &unroll);
  f->alloc_under_parallel += par;
  f->guarded += guard;
  f->vectorized += vec;
  f->unrolled += unroll;
  f->strided += ToText(scheduled).find("buffer_dim_align") != std::string::npos;
}

class LowerSuite : public ::testing::TestWithParam<int> {};

TEST_P(LowerSuite, UnscheduledLowersSoundly) {
  const Case c = ReducedSuite()[GetParam()];
  SCOPED_TRACE(c.name);
  testing::ExpectLowersSoundly(c.make());
}

TEST_P(LowerSuite, RandomSchedulesLowerSoundly) {
  const Case c = ReducedSuite()[GetParam()];
  const PrimFunc original = c.make();
  RandomEngine rng(5000 + GetParam());
  int applied = 0;
  Features features;
  for (int trial = 0; trial < 100; ++trial) {
    Schedule sch(original, rng.ForkSeed());
    const int steps = static_cast<int>(rng.SampleInt(2, 9));
    for (int s = 0; s < steps; ++s) {
      try {
        RandomStep(sch, rng);
        ++applied;
      } catch (const ScheduleError&) {
      }
    }
    SCOPED_TRACE(std::string(c.name) + " trial " + std::to_string(trial) + "\n" +
                 sch.trace().AsPython());
    testing::ExpectLowersSoundly(sch.func(), 11 + trial);
    if (::testing::Test::HasFailure()) return;
    Count(transform::Lower(sch.func()), sch.func(), &features);
  }
  EXPECT_GT(applied, 200) << c.name;
  // Every workload has reductions or imperfect splits to guard.
  EXPECT_GT(features.guarded, 0) << c.name;
  std::cout << c.name << ": of 100 lowered schedules, " << features.alloc_under_parallel
            << " allocate under a parallel loop, " << features.guarded << " have guards, "
            << features.vectorized << " keep a vectorized loop, " << features.unrolled
            << " keep an unrolled loop, " << features.strided << " request storage alignment\n";
}

INSTANTIATE_TEST_SUITE_P(Suite, LowerSuite,
                         ::testing::Range(0, static_cast<int>(ReducedSuite().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(ReducedSuite()[info.param].name);
                         });

}  // namespace
}  // namespace kiln::ir
