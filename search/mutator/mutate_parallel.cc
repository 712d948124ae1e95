// MutateParallel (TVM's, docs/ARCHITECTURE.md §6): change the parallel extent limit
// that ParallelizeVectorizeUnroll annotated on the root block
// (meta_schedule.parallel), which decides how many outer loops of each block
// RewriteParallelVectorizeUnroll fuses and parallelizes. The trace is
// replayed to read the loop nests; for every block under the root, the
// prefix products of its outer data-parallel loop extents are the limits
// that make a difference; each distinct limit gives a plan (how many loops
// each block fuses). The current plan is dropped and another drawn
// uniformly; its limit replaces the annotation's value.
#include <algorithm>
#include <map>

#include "ir/op.h"
#include "ir/schedule/schedule.h"
#include "ir/substitute.h"
#include "search/annotations.h"
#include "search/mutator.h"
#include "search/tune_context.h"

namespace kiln::search {
namespace {

// Per block directly under the root: the prefix products (outermost first)
// of the constant extents of the loops above it, up to the first product
// reaching `limit`, taking only the loops outside every loop that a
// non-spatial iter var of the block is bound to (TVM's AnalyzeParallel).
std::vector<std::vector<int64_t>> AnalyzeParallel(ir::Schedule& sch, int64_t limit) {
  std::vector<std::vector<int64_t>> out;
  const auto* root = sch.func().body.as<ir::BlockRealizeNode>();
  if (root == nullptr) return out;
  ir::BlockRV root_rv = sch.GetBlock(root->block->name);
  for (ir::BlockRV block : sch.GetChildBlocks(root_rv)) {
    const ir::BlockRealizeNode& realize = sch.GetRealize(block);
    const ir::BlockNode& b = *realize.block.get();
    std::vector<ir::Expr> non_spatial;
    for (size_t i = 0; i < b.iter_vars.size() && i < realize.iter_values.size(); ++i) {
      if (b.iter_vars[i].iter_type != ir::IterType::kDataPar) {
        non_spatial.push_back(realize.iter_values[i]);
      }
    }
    // TVM walks inner to outer and starts over at every non-spatial loop:
    // what is left are the loops outside the outermost non-spatial one, i.e.
    // walking outer to inner, those before the first non-spatial loop.
    std::vector<int64_t> extents;
    for (ir::LoopRV l : sch.GetLoops(block)) {
      const ir::ForNode& loop = sch.Get(l);
      const ir::VarNode* var = loop.loop_var.get();
      int64_t extent = -1;
      const bool used = std::any_of(non_spatial.begin(), non_spatial.end(), [&](const ir::Expr& e) {
        return ir::UsesVar(e, [var](const ir::VarNode* v) { return v == var; });
      });
      if (used || !ir::AsConstInt(loop.extent, &extent)) break;
      extents.push_back(extent);
    }
    if (extents.empty()) continue;
    std::vector<int64_t> prods;
    int64_t prod = 1;
    for (int64_t e : extents) {
      prods.push_back(prod *= e);
      if (prod >= limit) break;
    }
    out.push_back(std::move(prods));
  }
  return out;
}

// How many loops each block fuses under `limit`: the loops whose prefix
// product stays below it, plus the one that reaches it (TVM's GetNumFusedLoops).
std::vector<int> NumFusedLoops(const std::vector<std::vector<int64_t>>& prods, int64_t limit) {
  std::vector<int> out;
  for (const std::vector<int64_t>& p : prods) {
    const int n = static_cast<int>(p.size());
    int i = static_cast<int>(std::upper_bound(p.begin(), p.end(), limit) - p.begin());
    if (i > 0 && p[i - 1] == limit) --i;
    if (i != n) ++i;
    out.push_back(i);
  }
  return out;
}

class MutateParallel : public Mutator {
 public:
  explicit MutateParallel(int64_t max_jobs_per_core) : max_jobs_per_core_(max_jobs_per_core) {}
  std::string Name() const override { return "MutateParallel"; }
  void Initialize(const TuneContext& ctx) override {
    workload_ = ctx.workload;
    max_parallel_extent_ = static_cast<int64_t>(ctx.NumCores()) * max_jobs_per_core_;
  }

  std::optional<ir::Trace> Apply(const ir::Trace& trace, ir::RandomEngine& rng,
                                 std::string* why) const override {
    if (!workload_.body.defined()) {
      *why = "the mutator was not initialized with a tune context";
      return std::nullopt;
    }
    const size_t end = trace.PostprocIndex();
    std::vector<size_t> annotations;
    for (size_t i = 0; i < end; ++i) {
      const ir::Instruction& inst = trace.insts()[i];
      if (inst.kind == "Annotate" && inst.attrs.size() == 1 && inst.attrs[0] == ann::kParallel &&
          inst.inputs.size() == 2 && inst.inputs[1].kind == ir::InstArg::Kind::kInt) {
        annotations.push_back(i);
      }
    }
    if (annotations.empty()) {
      *why = "no parallel extent annotation";
      return std::nullopt;
    }
    const size_t chosen = annotations[rng.SampleInt(0, static_cast<int64_t>(annotations.size()))];
    const int64_t current = trace.insts()[chosen].inputs[1].int_value;

    ir::Schedule sch(workload_, rng.ForkSeed());
    std::vector<std::vector<int64_t>> prods;
    try {
      trace.ApplyToSchedule(&sch, /*remove_postproc=*/true);
      prods = AnalyzeParallel(sch, max_parallel_extent_);
    } catch (const std::exception& e) {
      *why = std::string("the trace does not replay: ") + e.what();
      return std::nullopt;
    }
    std::map<std::vector<int>, int64_t> plans;  // plan -> the first limit giving it
    std::vector<int64_t> limits;
    for (const std::vector<int64_t>& p : prods) {
      for (int64_t limit : p) {
        if (limit > max_parallel_extent_) continue;
        if (std::find(limits.begin(), limits.end(), limit) != limits.end()) continue;
        limits.push_back(limit);
        plans[NumFusedLoops(prods, limit)] = limit;  // the last limit of a plan wins, as in TVM
      }
    }
    plans.erase(NumFusedLoops(prods, current));
    if (plans.empty()) {
      *why = "no other parallel plan within " + std::to_string(max_parallel_extent_);
      return std::nullopt;
    }
    auto it = plans.begin();
    std::advance(it, rng.SampleInt(0, static_cast<int64_t>(plans.size())));
    ir::Trace out;
    for (size_t i = 0; i < end; ++i) {
      ir::Instruction inst = trace.insts()[i];
      if (i == chosen) inst.inputs[1] = ir::InstArg::Int(it->second);
      out.Append(std::move(inst), trace.GetDecision(i));
    }
    return out;
  }

 private:
  int64_t max_jobs_per_core_;
  int64_t max_parallel_extent_ = 16;
  ir::PrimFunc workload_;
};

}  // namespace

MutatorPtr MakeMutateParallel(int64_t max_jobs_per_core) {
  return std::make_shared<MutateParallel>(max_jobs_per_core);
}

}  // namespace kiln::search
