// Mutators (docs/ARCHITECTURE.md §6): every mutation of a sampled schedule either says
// why it found nothing to change or gives a trace that replays (or that a
// postprocessor rejects with a reason), and the program it builds computes
// what the workload does; tile mutations keep the product of the factors,
// the loop extent; the same RNG seed gives the same mutation.
#include "search/mutator.h"

#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <set>

#include "../schedule/schedule_test_util.h"
#include "ir/schedule/schedule.h"
#include "search/apply_trace.h"
#include "search/replay_trace.h"
#include "search/tune_context.h"
#include "search_test_util.h"

namespace kiln::search {
namespace {

using ir::testing::SameResult;
using testing::ChangedDecisions;

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

struct Outcome {
  int nothing = 0, rejected = 0, ok = 0;
};

// Mutates 3 sampled schedules of the case 3 times with each default mutator
// and checks every outcome; returns the outcomes by mutator.
std::map<std::string, Outcome> MutateAndCheck(const testing::ReducedCase& which) {
  const ir::PrimFunc original = which.make();
  TuneContext ctx = testing::Context(original, testing::kParityTarget, /*seed=*/5);
  std::vector<WeightedMutator> mutators = DefaultLLVMMutators();
  for (WeightedMutator& m : mutators) m.mutator->Initialize(ctx);
  ReplayTrace rt(ctx);
  std::map<std::string, Outcome> outcomes;
  int64_t seed = 100;
  for (const Candidate& parent : rt.NextBatch(3)) {
    for (const WeightedMutator& m : mutators) {
      for (int rep = 0; rep < 3; ++rep) {
        ir::RandomEngine rng(++seed);
        std::string why;
        std::optional<ir::Trace> t = m.mutator->Apply(parent.trace, rng, &why);
        Outcome& o = outcomes[m.mutator->Name()];
        if (!t) {
          EXPECT_FALSE(why.empty()) << m.mutator->Name() << " gave no reason";
          ++o.nothing;
          continue;
        }
        EXPECT_EQ(t->PostprocIndex(), t->size()) << "a mutated trace keeps no postproc part";
        FailureStats fails;
        std::optional<Candidate> c = ApplyTraceWithPostprocs(ctx, *t, 1, &fails);
        if (!c) {
          EXPECT_EQ(fails.counts.size(), 1u);
          EXPECT_FALSE(fails.example.begin()->second.empty())
              << m.mutator->Name() << ": rejected by " << fails.counts.begin()->first
              << " without a reason";
          ++o.rejected;
          continue;
        }
        ++o.ok;
        EXPECT_TRUE(SameResult(original, c->scheduled, 3, /*reordered_reduction=*/true))
            << which.name << " after " << m.mutator->Name() << ":\n"
            << t->AsPython();
        if (m.mutator->Name() == "MutateTileSize") {
          // One decision changed; a tile keeps its product and needed no
          // repair on replay (so the product is the loop extent).
          std::vector<size_t> changed = ChangedDecisions(parent.trace, *t);
          EXPECT_EQ(changed.size(), 1u);
          const size_t i = changed.empty() ? 0 : changed[0];
          if (!changed.empty() && t->insts()[i].kind == "SamplePerfectTile") {
            auto before = parent.trace.GetDecision(i)->get<std::vector<int64_t>>();
            auto after = t->GetDecision(i)->get<std::vector<int64_t>>();
            EXPECT_EQ(Product(before), Product(after));
            EXPECT_EQ(c->trace.GetDecision(i), t->GetDecision(i)) << "the replay repaired the tile";
            const int64_t max_inner = t->insts()[i].attrs[1].get<int64_t>();
            if (max_inner > 0 && after.back() != before.back()) {
              EXPECT_LE(after.back(), max_inner);
            }
          }
        }
      }
    }
  }
  return outcomes;
}

class MutatorSuite : public ::testing::TestWithParam<testing::ReducedCase> {};

TEST_P(MutatorSuite, MutationsReplayOrSayWhyAndComputeTheSame) {
  std::map<std::string, Outcome> outcomes = MutateAndCheck(GetParam());
  // Every schedule of the suite has tiles or a parallel annotation to mutate.
  EXPECT_GT(outcomes["MutateTileSize"].ok + outcomes["MutateParallel"].ok, 0) << GetParam().name;
}

TEST(Mutators, EachChangesSomeScheduleOfTheSuite) {
  std::map<std::string, Outcome> total;
  for (const testing::ReducedCase& c : testing::ReducedSuite()) {
    for (const auto& [name, o] : MutateAndCheck(c)) {
      total[name].ok += o.ok;
      total[name].rejected += o.rejected;
      total[name].nothing += o.nothing;
    }
  }
  for (const char* name :
       {"MutateTileSize", "MutateComputeLocation", "MutateUnroll", "MutateParallel"}) {
    const Outcome& o = total[name];
    std::cout << name << ": " << o.ok << " replayed, " << o.rejected << " rejected by a postproc, "
              << o.nothing << " found nothing to mutate\n";
    EXPECT_GT(o.ok, 0) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Reduced, MutatorSuite, ::testing::ValuesIn(testing::ReducedSuite()),
                         [](const auto& info) { return std::string(info.param.name); });

// A schedule by hand: a matmul tiled by sampled factors, a consumer whose
// compute location is sampled, the root annotations a rule would leave.
ir::Trace HandTrace(const ir::PrimFunc& f, int64_t seed) {
  ir::Schedule sch(f, seed);
  ir::BlockRV c = sch.GetBlock("C");
  std::vector<ir::LoopRV> loops = sch.GetLoops(c);
  std::vector<ir::ExprRV> fi = sch.SamplePerfectTile(loops[0], 3, 16);
  std::vector<ir::ExprRV> fj = sch.SamplePerfectTile(loops[1], 4, 4);
  sch.Split(loops[0], {fi[0], fi[1], fi[2]});
  sch.Split(loops[1], {fj[0], fj[1], fj[2], fj[3]});
  ir::BlockRV root = sch.GetBlock("root");
  sch.Annotate(root, "meta_schedule.parallel", int64_t{64});
  ir::ExprRV step = sch.SampleCategorical({0, 16, 64, 512}, {0.25, 0.25, 0.25, 0.25});
  sch.Annotate(root, "meta_schedule.unroll_explicit", step);
  return sch.trace();
}

TEST(MutateTileSize, KeepsProductsAndTheInnermostLimit) {
  const ir::PrimFunc f = ir::Matmul(64, 64, 64);
  const ir::Trace base = HandTrace(f, 3);
  MutatorPtr m = MakeMutateTileSize();
  int changed = 0;
  for (int64_t seed = 1; seed <= 200; ++seed) {
    ir::RandomEngine rng(seed);
    std::string why;
    std::optional<ir::Trace> t = m->Apply(base, rng, &why);
    ASSERT_TRUE(t.has_value()) << why;
    std::vector<size_t> diff = ChangedDecisions(base, *t);
    ASSERT_EQ(diff.size(), 1u);
    auto after = t->GetDecision(diff[0])->get<std::vector<int64_t>>();
    EXPECT_EQ(Product(after), 64);
    const int64_t limit = t->insts()[diff[0]].attrs[1].get<int64_t>();
    EXPECT_LE(after.back(), limit) << t->GetDecision(diff[0])->dump();
    ir::Schedule sch(f);
    t->ApplyToSchedule(&sch, false);
    EXPECT_EQ(sch.trace().GetDecision(diff[0]), t->GetDecision(diff[0]));
    ++changed;
    // The same seed gives the same mutation.
    ir::RandomEngine again(seed);
    EXPECT_EQ(m->Apply(base, again, &why)->AsJSONString(), t->AsJSONString());
  }
  EXPECT_EQ(changed, 200);
}

TEST(MutateTileSize, SaysWhyWhenThereIsNoTile) {
  ir::Schedule sch(ir::MatmulRelu(8, 8, 8));
  sch.GetLoops(sch.GetBlock("C"));
  std::string why;
  ir::RandomEngine rng(1);
  EXPECT_FALSE(MakeMutateTileSize()->Apply(sch.trace(), rng, &why).has_value());
  EXPECT_NE(why.find("no tile"), std::string::npos) << why;
}

TEST(MutateUnroll, DrawsAnotherStep) {
  const ir::Trace base = HandTrace(ir::Matmul(64, 64, 64), 4);
  MutatorPtr m = MakeMutateUnroll();
  size_t sampler = 0;
  for (size_t i = 0; i < base.size(); ++i) {
    if (base.insts()[i].kind == "SampleCategorical") sampler = i;
  }
  const int64_t before = base.GetDecision(sampler)->get<int64_t>();
  std::set<int64_t> seen;
  for (int64_t seed = 1; seed <= 60; ++seed) {
    ir::RandomEngine rng(seed);
    std::string why;
    std::optional<ir::Trace> t = m->Apply(base, rng, &why);
    ASSERT_TRUE(t.has_value()) << why;
    const int64_t after = t->GetDecision(sampler)->get<int64_t>();
    EXPECT_NE(after, before);
    seen.insert(after);
  }
  EXPECT_EQ(seen.size(), 3u);  // every other step is reachable
}

TEST(MutateParallel, PicksAnotherPlan) {
  const ir::PrimFunc f = ir::Matmul(64, 64, 64);
  TuneContext ctx = testing::Context(f, "llvm -num-cores=4");  // limit 4 x 16 = 64
  MutatorPtr m = MakeMutateParallel(16);
  m->Initialize(ctx);
  int changed = 0;
  for (int64_t seed = 1; seed <= 20; ++seed) {
    const ir::Trace base = HandTrace(f, seed);
    size_t ann = 0;
    for (size_t i = 0; i < base.size(); ++i) {
      const ir::Instruction& inst = base.insts()[i];
      if (inst.kind == "Annotate" && inst.attrs[0] == "meta_schedule.parallel") ann = i;
    }
    ir::RandomEngine rng(seed);
    std::string why;
    std::optional<ir::Trace> t = m->Apply(base, rng, &why);
    if (!t) {
      EXPECT_FALSE(why.empty());
      continue;
    }
    const int64_t value = t->insts()[ann].inputs[1].int_value;
    EXPECT_NE(value, 64);
    EXPECT_LE(value, 64);
    EXPECT_GE(value, 1);
    ir::Schedule sch(f);
    t->ApplyToSchedule(&sch, false);
    ++changed;
  }
  EXPECT_GT(changed, 0);
}

TEST(MutateComputeLocation, MovesABlockAndKeepsTheResult) {
  const testing::ReducedCase c2d = testing::ReducedSuite()[1];
  const ir::PrimFunc f = c2d.make();
  TuneContext ctx = testing::Context(f, testing::kParityTarget, 9);
  MutatorPtr m = MakeMutateComputeLocation();
  m->Initialize(ctx);
  ReplayTrace rt(ctx);
  int moved = 0;
  int64_t seed = 0;
  for (const Candidate& parent : rt.NextBatch(6)) {
    ir::RandomEngine rng(++seed);
    std::string why;
    std::optional<ir::Trace> t = m->Apply(parent.trace, rng, &why);
    if (!t) {
      EXPECT_FALSE(why.empty());
      continue;
    }
    std::vector<size_t> diff = ChangedDecisions(parent.trace, *t);
    ASSERT_EQ(diff.size(), 1u);
    EXPECT_EQ(t->insts()[diff[0]].kind, "SampleComputeLocation");
    FailureStats fails;
    if (std::optional<Candidate> c = ApplyTraceWithPostprocs(ctx, *t, 1, &fails)) {
      EXPECT_TRUE(SameResult(f, c->scheduled, 3, true));
      ++moved;
    }
  }
  EXPECT_GT(moved, 0) << "no C2D sample had a compute location to move";
}

}  // namespace
}  // namespace kiln::search
