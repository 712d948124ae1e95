// Schedule handles, sampling, and the trace: JSON, replay, simplification.
#include <gtest/gtest.h>

#include <thread>

#include "ir/ir.h"
#include "ir/text/printer.h"
#include "ir/schedule/schedule.h"
#include "ir/structural_equal.h"

namespace kiln::ir {
namespace {

using nlohmann::json;

// C[i, j] += A[i, k] * B[k, j] over n×n×n, built by hand.
PrimFunc Matmul(int64_t n) {
  Buffer a("A", DataType::Float32(), {IntImm(n), IntImm(n)});
  Buffer b("B", DataType::Float32(), {IntImm(n), IntImm(n)});
  Buffer c("C", DataType::Float32(), {IntImm(n), IntImm(n)});
  Var i("i"), j("j"), k("k"), vi("v_i"), vj("v_j"), vk("v_k");
  BlockNode blk;
  blk.name = "C";
  blk.iter_vars = {{vi, {IntImm(0), IntImm(n)}, IterType::kDataPar},
                   {vj, {IntImm(0), IntImm(n)}, IterType::kDataPar},
                   {vk, {IntImm(0), IntImm(n)}, IterType::kCommReduce}};
  auto point = [](const Buffer& buf, std::vector<Expr> idx) {
    BufferRegion r{buf, {}};
    for (auto& e : idx) r.region.push_back({e, IntImm(1)});
    return r;
  };
  blk.reads = {point(c, {vi, vj}), point(a, {vi, vk}), point(b, {vk, vj})};
  blk.writes = {point(c, {vi, vj})};
  blk.init = BufferStore(c, FloatImm(0.0), {vi, vj});
  blk.body = BufferStore(c, BufferLoad(c, {vi, vj}) + BufferLoad(a, {vi, vk}) * BufferLoad(b, {vk, vj}),
                         {vi, vj});
  Stmt s = BlockRealize({i, j, k}, BoolImm(true), MakeBlock(std::move(blk)));
  s = For(k, IntImm(0), IntImm(n), ForKind::kSerial, s);
  s = For(j, IntImm(0), IntImm(n), ForKind::kSerial, s);
  s = For(i, IntImm(0), IntImm(n), ForKind::kSerial, s);
  PrimFunc f;
  f.params = {a, b, c};
  f.body = MakeRootBody(s);
  return f;
}

TEST(RandomEngine, MatchesParkMillerAndTvmForkSeed) {
  RandomEngine rng(1);
  EXPECT_EQ(rng.Next(), 48271);
  EXPECT_EQ(rng.Next(), 182605794);
  EXPECT_EQ(rng.Next(), 1291394886);
  RandomEngine zero(0);
  EXPECT_EQ(zero.state(), 1);  // a zero state would be stuck
  RandomEngine neg(-5);
  EXPECT_GT(neg.state(), 0);
  RandomEngine f(42);
  int64_t expected = ((int64_t{42} * 48271) % 2147483647) * 32767 % 1999999973;
  EXPECT_EQ(f.ForkSeed(), expected);
}

TEST(RandomEngine, SamplersStayInRange) {
  RandomEngine rng(7);
  for (int t = 0; t < 1000; ++t) {
    int64_t v = rng.SampleInt(3, 9);
    EXPECT_GE(v, 3);
    EXPECT_LT(v, 9);
    double u = rng.SampleUniform();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
    EXPECT_NE(rng.SampleCategorical({0.0, 1.0, 0.0}), 0);
  }
  auto w = rng.SampleWithoutReplacement(10, 10);
  std::sort(w.begin(), w.end());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(w[i], i);
  EXPECT_THROW(rng.SampleCategorical({0.0, 0.0}), std::invalid_argument);
}

TEST(Schedule, GetBlockAndLoops) {
  Schedule sch(Matmul(16));
  BlockRV c = sch.GetBlock("C");
  std::vector<LoopRV> loops = sch.GetLoops(c);
  ASSERT_EQ(loops.size(), 3u);
  EXPECT_EQ(sch.NameOf(loops[0]), "i");
  EXPECT_EQ(sch.NameOf(loops[2]), "k");
  EXPECT_EQ(sch.Get(c).name, "C");
  try {
    sch.GetBlock("D");
    FAIL();
  } catch (const ScheduleError& e) {
    EXPECT_STREQ(e.what(), "get_block: no block named 'D' (blocks: C)");
  }
  EXPECT_THROW(sch.Get(LoopRV{c.id}), ScheduleError);  // a block handle is not a loop
  EXPECT_THROW(sch.Get(LoopRV{999}), ScheduleError);
}

TEST(Schedule, ChildBlocksOfALoopIncludeABlockThatIsItsWholeBody) {
  Schedule sch(Matmul(8));
  BlockRV c = sch.GetBlock("C");
  auto loops = sch.GetLoops(c);
  auto under_k = sch.GetChildBlocks(loops[2]);  // k's body is the block itself
  ASSERT_EQ(under_k.size(), 1u);
  EXPECT_EQ(sch.NameOf(under_k[0]), "C");
  EXPECT_EQ(sch.GetChildBlocks(loops[0]).size(), 1u);
  EXPECT_EQ(sch.GetChildBlocks(sch.GetBlock("root")).size(), 1u);
  EXPECT_TRUE(sch.GetChildBlocks(c).empty());
}

TEST(Schedule, PerfectTileMultipliesToExtentAndRespectsInnermost) {
  for (int64_t seed = 1; seed < 60; ++seed) {
    Schedule sch(Matmul(48), seed);
    auto loops = sch.GetLoops(sch.GetBlock("C"));
    auto tile = sch.SamplePerfectTile(loops[0], 4, 8);
    int64_t product = 1;
    for (auto v : tile) product *= sch.Get(v);
    EXPECT_EQ(product, 48);
    EXPECT_LE(sch.Get(tile.back()), 8);
  }
}

TEST(Schedule, PerfectTileDecisionIsRepairedOnReplay) {
  Schedule sch(Matmul(128));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  auto tile = sch.SamplePerfectTile(loops[0], 3, 64, std::vector<int64_t>{4, 8, 8});
  EXPECT_EQ(sch.Get(tile[0]), 2);  // 4·8·8 = 256 ≠ 128: the outer factor absorbs the rest
  EXPECT_EQ(sch.Get(tile[1]), 8);
  EXPECT_EQ(sch.Get(tile[2]), 8);
  auto bad = sch.SamplePerfectTile(loops[1], 2, 64, std::vector<int64_t>{1, 3});
  EXPECT_EQ(sch.Get(bad[0]), 1);  // 3 does not divide 128: it becomes 128
  EXPECT_EQ(sch.Get(bad[1]), 128);
  EXPECT_EQ(sch.trace().GetDecision(2)->dump(), "[2,8,8]");
}

TEST(Schedule, CategoricalDecisionAndRange) {
  Schedule sch(Matmul(8));
  ExprRV v = sch.SampleCategorical({0, 16, 64, 512}, {0.25, 0.25, 0.25, 0.25}, 2);
  EXPECT_EQ(sch.Get(v), 64);
  EXPECT_THROW(sch.SampleCategorical({0, 16}, {0.5, 0.5}, 5), ScheduleError);
  EXPECT_THROW(sch.SampleCategorical({0, 16}, {0.5}), ScheduleError);
}

Trace SampleTrace(int64_t seed) {
  Schedule sch(Matmul(64), seed);
  BlockRV c = sch.GetBlock("C");
  auto loops = sch.GetLoops(c);
  sch.SamplePerfectTile(loops[0], 4, 16);
  sch.SamplePerfectTile(loops[1], 4, 16);
  sch.SamplePerfectTile(loops[2], 2, 16);
  sch.SampleCategorical({0, 16, 64, 512}, {0.25, 0.25, 0.25, 0.25});
  sch.EnterPostproc();
  return sch.trace();
}

TEST(Trace, JsonHasTvmShapeAndNaming) {
  Trace t = SampleTrace(3);
  json j = t.AsJSON();
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0][0].dump(), R"(["GetBlock",[],["C","main"],["b0"]])");
  EXPECT_EQ(j[0][1].dump(), R"(["GetLoops",["b0"],[],["l1","l2","l3"]])");
  EXPECT_EQ(j[0][2][0], "SamplePerfectTile");
  EXPECT_EQ(j[0][2][1].dump(), R"(["l1"])");
  EXPECT_EQ(j[0][2][2].dump(), "[4,16]");
  EXPECT_EQ(j[0][2][3].dump(), R"(["v4","v5","v6","v7"])");
  EXPECT_EQ(j[1].size(), 4u);
  EXPECT_EQ(j[1][0][0], 2);
}

TEST(Trace, JsonRoundTripIsAFixedPoint) {
  Trace t = SampleTrace(5);
  std::string once = t.AsJSONString();
  Trace back = Trace::FromJSONString(once);
  EXPECT_EQ(back.AsJSONString(), once);
  EXPECT_EQ(back.AsPython(), t.AsPython());
}

// The evolutionary search caches replays by IdentityKey
// (search/evolutionary_search.cc): equal keys must mean equal traces, and a
// replay in a fresh schedule must find the key of the trace it replays.
TEST(Trace, IdentityKeyIsEqualExactlyWhenTheTracesAre) {
  std::vector<Trace> traces;
  for (int64_t seed = 1; seed <= 24; ++seed) traces.push_back(SampleTrace(seed));
  // Sketches (no decisions), attributes changed, a decision changed.
  traces.push_back(SampleTrace(7));  // the same seed: an equal trace
  traces.push_back(traces[0].WithoutDecisions());
  traces.push_back(traces[1].WithDecision(2, json::array({1, 1, 2, 32}), false));
  traces.push_back(traces[1].WithDecision(2, json::array({1, 1, 32, 2}), false));
  traces.push_back(traces[1].WithDecision(5, json(0), false));
  traces.push_back(Trace::FromJSONString(
      R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1","l2","l3"]]],[]])"));
  traces.push_back(Trace::FromJSONString(
      R"([[["GetBlock",[],["B","main"],["b0"]],["GetLoops",["b0"],[],["l1","l2","l3"]]],[]])"));
  int equal_pairs = 0;
  for (size_t i = 0; i < traces.size(); ++i) {
    for (size_t j = 0; j < traces.size(); ++j) {
      const bool same = traces[i].AsJSONString() == traces[j].AsJSONString();
      equal_pairs += same && i != j;
      EXPECT_EQ(traces[i].IdentityKey() == traces[j].IdentityKey(), same) << i << " vs " << j;
    }
  }
  EXPECT_GT(equal_pairs, 0);  // the "equal" side is exercised too
  for (int64_t seed : {3, 9}) {
    Trace t = SampleTrace(seed);
    Schedule again(Matmul(64), 999);
    t.ApplyToSchedule(&again, false);
    EXPECT_EQ(again.trace().IdentityKey(), t.IdentityKey());
  }
}

TEST(Trace, TvmSpellingGetSBlockIsAccepted) {
  Trace t = Trace::FromJSONString(
      R"([[["GetSBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1","l2","l3"]]],[]])");
  Schedule sch(Matmul(8));
  t.ApplyToSchedule(&sch, false);
  EXPECT_EQ(sch.trace().size(), 2u);
  EXPECT_EQ(sch.trace().insts()[0].kind, "GetBlock");
}

TEST(Trace, ReplayWithDecisionsReproducesAndWithoutResamples) {
  Trace t = SampleTrace(11);
  Schedule again(Matmul(64), 999);
  Trace::FromJSONString(t.AsJSONString()).ApplyToSchedule(&again, false);
  EXPECT_EQ(again.trace().AsJSONString(), t.AsJSONString());

  // Without decisions, the replay draws from the new schedule's RNG.
  Schedule s1(Matmul(64), 1), s2(Matmul(64), 1);
  t.WithoutDecisions().ApplyToSchedule(&s1, false);
  t.WithoutDecisions().ApplyToSchedule(&s2, false);
  EXPECT_EQ(s1.trace().AsJSONString(), s2.trace().AsJSONString());
}

TEST(Trace, SameSeedSameDecisionsOnAnyThread) {
  std::vector<std::string> results(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] { results[t] = SampleTrace(77).AsJSONString(); });
  }
  for (auto& th : threads) th.join();
  for (const auto& r : results) EXPECT_EQ(r, SampleTrace(77).AsJSONString());
}

TEST(Trace, DecisionProviderOverrides) {
  Trace t = SampleTrace(2);
  Schedule sch(Matmul(64));
  t.ApplyToSchedule(&sch, false, [](const Instruction& inst, const std::vector<InstArg>&,
                                    const std::optional<json>& old) {
    if (inst.kind == "SampleCategorical") return std::optional<json>(json(3));
    return old;
  });
  EXPECT_EQ(sch.trace().GetDecision(5)->get<int>(), 3);
}

TEST(Trace, SimplifiedDropsUnusedPureInstructionsAndPostproc) {
  Schedule sch(Matmul(16));
  BlockRV c = sch.GetBlock("C");
  sch.GetLoops(c);  // unused
  sch.EnterPostproc();
  sch.GetBlock("C");
  Trace s = sch.trace().Simplified(/*remove_postproc=*/true);
  EXPECT_EQ(s.size(), 0u);
  Trace keep = sch.trace().Simplified(false);
  EXPECT_EQ(keep.size(), 1u);  // only EnterPostproc is impure
  Trace w = SampleTrace(4).WithDecision(4, json::array({1, 1, 1, 64}), true);
  EXPECT_EQ(w.size(), 6u);
  EXPECT_EQ(w.GetDecision(4)->dump(), "[1,1,1,64]");
}

// Dead code is found transitively: a chain of pure instructions whose last
// result feeds a kept (impure) instruction is kept whole; a sampler whose
// result nothing uses is dropped together with the pure instructions that
// only feed it; the decisions of the kept samplers move with them to their new
// indices; and the simplified trace builds the same program.
TEST(Trace, SimplifiedDropsDeadCodeTransitivelyAndKeepsLiveDecisions) {
  Schedule sch(Matmul(64), 5);
  BlockRV c = sch.GetBlock("C");                          // 0: feeds everything kept
  std::vector<LoopRV> loops = sch.GetLoops(c);            // 1: feeds Split, Reorder
  auto tile = sch.SamplePerfectTile(loops[0], 2, 16);     // 2: feeds Split
  BlockRV c2 = sch.GetBlock("C");                         // 3: dead (only feeds 4)
  std::vector<LoopRV> dead_loops = sch.GetLoops(c2);      // 4: dead (only feeds 5)
  sch.SamplePerfectTile(dead_loops[1], 4, 8);             // 5: dead (result unused)
  ExprRV unused = sch.SampleCategorical({1, 2, 3}, {0.2, 0.3, 0.5});  // 6: dead
  (void)unused;
  std::vector<LoopRV> split = sch.Split(loops[0], {tile[0], tile[1]});  // 7: impure
  ExprRV unroll = sch.SampleCategorical({0, 16, 64}, {0.3, 0.3, 0.4});  // 8: feeds Annotate
  sch.Reorder({loops[1], split[0]});                       // 9: impure
  sch.Annotate(c, "meta_schedule.unroll_explicit", unroll);  // 10: impure
  const Trace& full = sch.trace();
  ASSERT_EQ(full.size(), 11u);

  Trace simple = full.Simplified(/*remove_postproc=*/false);
  std::vector<std::string> kinds;
  for (const Instruction& inst : simple.insts()) kinds.push_back(inst.kind);
  const std::vector<std::string> expected = {"GetBlock", "GetLoops", "SamplePerfectTile",
                                             "Split", "SampleCategorical", "Reorder", "Annotate"};
  EXPECT_EQ(kinds, expected);
  // The kept samplers keep their decisions, now at indices 2 and 4; no other
  // instruction has one.
  ASSERT_TRUE(simple.GetDecision(2).has_value());
  EXPECT_EQ(simple.GetDecision(2)->dump(), full.GetDecision(2)->dump());
  ASSERT_TRUE(simple.GetDecision(4).has_value());
  EXPECT_EQ(simple.GetDecision(4)->dump(), full.GetDecision(8)->dump());
  EXPECT_EQ(simple.decisions().size(), 2u);
  // The kept SampleCategorical is the one with three candidates {0, 16, 64}.
  EXPECT_EQ(simple.insts()[4].attrs[0].dump(), "[0,16,64]");

  // Simplifying again changes nothing; the JSON form parses back to it.
  EXPECT_EQ(simple.Simplified(false).AsJSONString(), simple.AsJSONString());
  Trace parsed = Trace::FromJSONString(simple.AsJSONString());
  EXPECT_EQ(parsed.AsJSONString(), simple.AsJSONString());

  // Replaying the simplified trace (a different seed: the decisions decide)
  // builds the program the original schedule built.
  Schedule replayed(Matmul(64), 12345);
  parsed.ApplyToSchedule(&replayed, false);
  EXPECT_TRUE(StructuralEqual(replayed.func(), sch.func()))
      << ToText(replayed.func()) << "\nvs\n" << ToText(sch.func());
  // And so does the original trace.
  Schedule full_replayed(Matmul(64), 777);
  full.ApplyToSchedule(&full_replayed, false);
  EXPECT_TRUE(StructuralEqual(full_replayed.func(), replayed.func()));
}

// Dropping the only impure user of a chain drops the whole chain.
TEST(Trace, SimplifiedDropsAChainWhoseOnlyUserIsAfterPostproc) {
  Schedule sch(Matmul(64), 3);
  BlockRV c = sch.GetBlock("C");
  std::vector<LoopRV> loops = sch.GetLoops(c);
  auto tile = sch.SamplePerfectTile(loops[2], 2, 16);
  sch.EnterPostproc();
  sch.Split(loops[2], {tile[0], tile[1]});
  EXPECT_EQ(sch.trace().Simplified(/*remove_postproc=*/true).size(), 0u);
  Trace kept = sch.trace().Simplified(/*remove_postproc=*/false);
  EXPECT_EQ(kept.size(), 5u);
  ASSERT_TRUE(kept.GetDecision(2).has_value());
  EXPECT_EQ(kept.GetDecision(2)->dump(), sch.trace().GetDecision(2)->dump());
}

TEST(Trace, PythonForm) {
  Trace t = SampleTrace(9);
  std::string py = t.AsPython();
  EXPECT_NE(py.find("def apply_trace(sch):\n  b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
                    "  l1, l2, l3 = sch.get_loops(b0)\n"),
            std::string::npos)
      << py;
  EXPECT_NE(py.find("= sch.sample_perfect_tile(loop=l1, n=4, max_innermost_factor=16, decision=["),
            std::string::npos);
  EXPECT_NE(py.find("sch.enter_postproc()"), std::string::npos);
}

struct BadTrace {
  const char* json;
  const char* message;
};

TEST(Trace, MalformedJsonGetsClearErrors) {
  const BadTrace cases[] = {
      {"{", "trace is not valid JSON"},
      {"[[1e999999]]", "trace is not valid JSON"},  // found by the fuzzer: out_of_range
      {"{}", "a trace is [[instructions...], [decisions...]]"},
      {R"([[["Nope",[],[],[]]]])", "trace instruction 0: unknown instruction kind 'Nope'"},
      {R"([[["GetLoops",["b9"],[],["l0"]]]])", "undefined random variable 'b9'"},
      {R"([[["GetBlock",[],["C","main"],["x0"]]]])", "must be named b<i>, l<i> or v<i>"},
      {R"([[["GetBlock",[],["C","main"],["b0"]],["GetBlock",[],["C","main"],["b0"]]]])",
       "defined twice"},
      {R"([[["GetBlock",[],["C","main"]]]])", "an instruction is [name, inputs, attrs, outputs]"},
      {R"([[["GetBlock",[],["C","main"],["b0"]]],[[0,1]]])", "this kind takes no decision"},
      {R"([[["GetBlock",[],["C","main"],["b0"]]],[[7,1]]])", "which does not exist"},
      {R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",[{"a":1}],[],[]]]])",
       "an input must be a name"},
      {R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",[18446744073709551615],[],[]]]])",
       "integer input out of range"},
  };
  for (const auto& c : cases) {
    try {
      Trace::FromJSONString(c.json);
      ADD_FAILURE() << "accepted: " << c.json;
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos)
          << c.json << " -> " << e.what();
    }
  }
}

TEST(Trace, ReplayErrorsNameTheInstruction) {
  struct Case {
    const char* json;
    const char* message;
  };
  const Case cases[] = {
      {R"([[["GetBlock",[],["C"],["b0"]]]])", "GetBlock: expected 2 attribute(s), got 1"},
      {R"([[["GetBlock",[],["Z","main"],["b0"]]]])", "no block named 'Z'"},
      {R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1"]]]])",
       "produced 3 output(s), the trace names 1"},
      {R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1","l2","l3"]],)"
       R"(["SamplePerfectTile",["b0"],[2,16],["v4","v5"]]]])",
       "input 0 must be a loop handle"},
      {R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1","l2","l3"]],)"
       R"(["SamplePerfectTile",["l1"],[2,16],["v4","v5"]]],[[2,[1,2,3]]]])",
       "decision has 3 factors, expected 2"},
      {R"([[["SampleCategorical",[],[[1,2],[0.5,0.5]],["v0"]]],[[0,9]]])",
       "decision 9 is out of range for 2 candidates"},
      {R"([[["SampleCategorical",[],[[1,2],[0.5,0.5]],["v0"]]],[[0,"x"]]])",
       "the decision must be an integer"},
      {R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1","l2","l3"]],)"
       R"(["SamplePerfectTile",["l1"],[99999,16],["v4"]]]])",
       "n must be in [1, 64]"},
  };
  for (const auto& c : cases) {
    Schedule sch(Matmul(8));
    try {
      Trace::FromJSONString(c.json).ApplyToSchedule(&sch, false);
      ADD_FAILURE() << "replayed: " << c.json;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos)
          << c.json << " -> " << e.what();
    }
  }
}

}  // namespace
}  // namespace kiln::ir
