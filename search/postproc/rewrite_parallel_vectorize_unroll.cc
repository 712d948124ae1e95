// RewriteParallelVectorizeUnroll: carry out the root annotations that
// ParallelizeVectorizeUnroll left. For every block directly under the root:
// fuse and parallelize the leading data-parallel loops while their product
// stays within the parallel limit (up to a loop that an earlier block's
// rewrite made parallel already); fuse and vectorize the trailing
// data-parallel loops that access memory contiguously, within the vectorize
// limit (vectorizing wins where the two would overlap; when every loop
// qualifies for both, fuse all and split by the vector length); and mark the
// outermost loop of a non-spatial block with the sampled unroll step.
#include <climits>
#include <optional>

#include "ir/arith/analyzer.h"
#include "ir/schedule/stmt_path.h"
#include "ir/substitute.h"
#include "search/annotations.h"
#include "search/postproc.h"
#include "search/rule_analysis.h"

namespace kiln::search {
namespace {

struct Parsed {
  int64_t max_parallel_extent = -1;
  int64_t max_vectorize_extent = -1;
  int64_t unroll_explicit = -1;
  int64_t unroll_implicit = -1;
  int num_parallel_loops = -1;
  int num_vectorize_loops = -1;
};

const int64_t* ConstExtent(const ir::ForNode& loop) {
  const auto* imm = loop.extent.as<ir::IntImmNode>();
  return imm ? &imm->value : nullptr;
}
bool HasAnnOrBinding(const ir::ForNode& loop) {
  return loop.for_kind == ir::ForKind::kThreadBinding || !loop.annotations.empty();
}
bool IsSingleStmt(const ir::Stmt& s) {
  const auto* seq = s.as<ir::SeqStmtNode>();
  return !seq || seq->seq.size() == 1;
}

// How many trailing loops every access of the block walks contiguously:
// going inward, each used loop's stride must continue the previous one.
int MaxFusibleForVectorize(const ir::BlockRealizeNode& realize,
                           const std::vector<const ir::ForNode*>& loops) {
  const ir::BlockNode& block = *realize.block.get();
  ir::VarMap binding;
  for (size_t i = 0; i < block.iter_vars.size(); ++i) {
    binding[block.iter_vars[i].var.get()] = realize.iter_values[i];
  }
  std::vector<ir::BufferRegion> accesses = block.reads;
  accesses.insert(accesses.end(), block.writes.begin(), block.writes.end());
  int max_fusible = INT_MAX;
  for (const ir::BufferRegion& access : accesses) {
    // The index of a dimension, in the loops' variables, does not depend on
    // the loop asked about: simplify it once (when first needed) and reuse
    // it for every loop (this postproc runs on every replayed candidate).
    ir::arith::Analyzer analyzer;
    std::vector<ir::Expr> index(access.region.size());
    auto index_of = [&](int d) -> const ir::Expr& {
      if (!index[d].defined()) {
        index[d] = analyzer.Simplify(ir::Substitute(access.region[d].min, binding));
      }
      return index[d];
    };
    std::vector<int64_t> strides;
    for (const ir::ForNode* loop : loops) {
      int64_t stride = 0, buffer_stride = 1;
      for (int d = static_cast<int>(access.region.size()) - 1; d >= 0; --d) {
        int64_t coef = StrideOf(index_of(d), loop->loop_var.get());
        if (coef != 0) {
          stride = coef * buffer_stride;
          break;
        }
        const auto* dim = access.buffer.shape()[d].as<ir::IntImmNode>();
        buffer_stride *= dim ? dim->value : 1;
      }
      strides.push_back(stride);
    }
    int fusible = 0, prev = -1;
    for (int i = static_cast<int>(strides.size()) - 1; i >= 0; --i) {
      if (strides[i] == 0) {
        ++fusible;
      } else if (prev == -1) {
        if (strides[i] != 1 && fusible != 0) break;
        ++fusible;
        prev = i;
      } else {
        const int64_t* prev_extent = ConstExtent(*loops[prev]);
        if (!prev_extent || strides[i] != strides[prev] * *prev_extent) break;
        ++fusible;
        prev = i;
      }
    }
    max_fusible = std::min(max_fusible, fusible);
  }
  return max_fusible;
}

void Adjust(const ir::Schedule& sch, ir::BlockRV block, const std::vector<ir::LoopRV>& loop_rvs,
            Parsed* p) {
  if (p->max_parallel_extent == -1 && p->max_vectorize_extent == -1) return;
  const int n = static_cast<int>(loop_rvs.size());
  std::vector<const ir::ForNode*> loops;
  for (ir::LoopRV l : loop_rvs) loops.push_back(&sch.Get(l));
  // Each loop's kind is asked for when needed: the counts below stop at the
  // first loop that is not data-parallel, and a deep tiled nest has many.
  std::vector<std::optional<ir::IterType>> known(n);
  auto type = [&](int i) {
    if (!known[i]) known[i] = LoopIterType(loops[i]);
    return *known[i];
  };
  const int max_fusible = MaxFusibleForVectorize(sch.GetRealize(block), loops);
  bool all_rewritable = true;
  for (int i = 0; i < n && all_rewritable; ++i) {
    all_rewritable = !HasAnnOrBinding(*loops[i]) && IsSingleStmt(loops[i]->body) &&
                     ConstExtent(*loops[i]) && type(i) == ir::IterType::kDataPar;
  }
  if (p->max_parallel_extent != -1) {
    int& num = p->num_parallel_loops = 0;
    int64_t prod = 1;
    for (int i = 0; i < n && type(i) == ir::IterType::kDataPar; ++i) {
      // A loop that is parallel already was fused and parallelized for an
      // earlier block that shares it (a cache-write block computed under
      // the compute's outer tiles): this block runs in parallel too. TVM
      // fuses that one loop again and parallelizes the copy, which renames
      // it and checks the whole subtree once more, for the same program.
      if (HasAnnOrBinding(*loops[i]) || loops[i]->for_kind == ir::ForKind::kParallel) break;
      const int64_t* ext = ConstExtent(*loops[i]);
      if (!ext) break;
      ++num;
      prod *= *ext;
      if (prod > p->max_parallel_extent || !IsSingleStmt(loops[i]->body)) break;
    }
    if (prod == 1) num = -1;
  }
  if (p->max_vectorize_extent != -1) {
    int& num = p->num_vectorize_loops = 0;
    int64_t prod = 1;
    for (int i = n - 1; i >= 0 && num < max_fusible && type(i) == ir::IterType::kDataPar; --i) {
      if (HasAnnOrBinding(*loops[i]) || !IsSingleStmt(loops[i]->body)) break;
      const int64_t* ext = ConstExtent(*loops[i]);
      if (!ext) break;
      prod *= *ext;
      if (prod > p->max_vectorize_extent) break;
      ++num;
    }
    if (prod == 1) num = -1;
  }
  if (all_rewritable && max_fusible == n) {
    p->num_parallel_loops = n;
    p->num_vectorize_loops = n;
  } else if (p->num_parallel_loops != -1 && p->num_vectorize_loops != -1) {
    p->num_parallel_loops = std::min(p->num_parallel_loops, n - p->num_vectorize_loops);
  }
}

void Rewrite(ir::Schedule& sch, ir::BlockRV block, std::vector<ir::LoopRV> loops, const Parsed& p) {
  const int n = static_cast<int>(loops.size());
  if (p.num_parallel_loops == n && p.num_vectorize_loops == n) {
    ir::LoopRV fused = sch.Fuse(loops);
    std::vector<ir::LoopRV> split = sch.Split(fused, {std::monostate{}, p.max_vectorize_extent});
    sch.Parallel(split[0]);
    sch.Vectorize(split[1]);
    for (int i = 0; i < n - 1; ++i) loops[i] = split[0];
    loops[n - 1] = split[1];
  } else {
    if (p.num_parallel_loops > 0) {
      ir::LoopRV fused =
          sch.Fuse(std::vector<ir::LoopRV>(loops.begin(), loops.begin() + p.num_parallel_loops));
      sch.Parallel(fused);
      for (int i = 0; i < p.num_parallel_loops; ++i) loops[i] = fused;
    }
    if (p.num_vectorize_loops > 0) {
      ir::LoopRV fused =
          sch.Fuse(std::vector<ir::LoopRV>(loops.end() - p.num_vectorize_loops, loops.end()));
      sch.Vectorize(fused);
      for (int i = n - p.num_vectorize_loops; i < n; ++i) loops[i] = fused;
    }
  }
  if (p.unroll_explicit != -1 || p.unroll_implicit != -1) {
    const int64_t max_step = p.unroll_explicit + p.unroll_implicit + 1;
    if (max_step > 0 && !IsSpatialBlock(sch.Get(block))) {
      sch.Annotate(loops[0], ann::kPragmaAutoUnrollMaxStep, max_step);
      sch.Annotate(loops[0], ann::kPragmaUnrollExplicit, int64_t{p.unroll_explicit != -1 ? 1 : 0});
    }
  }
}

class RewriteParallelVectorizeUnroll : public Postproc {
 public:
  std::string Name() const override { return "RewriteParallelVectorizeUnroll"; }
  bool Apply(ir::Schedule* sch, std::string* why) override {
    const auto* root = sch->func().body.as<ir::BlockRealizeNode>();
    if (!root) return true;
    const ir::Annotations& anns = root->block->annotations;
    Parsed parsed;
    bool found = false;
    auto take = [&](const char* key, int64_t* out) {
      if (!anns.count(key)) return;
      found = true;
      if (auto v = IntAnn(anns, key)) *out = *v;
    };
    take(ann::kParallel, &parsed.max_parallel_extent);
    take(ann::kVectorize, &parsed.max_vectorize_extent);
    take(ann::kUnrollExplicit, &parsed.unroll_explicit);
    take(ann::kUnrollImplicit, &parsed.unroll_implicit);
    if (!found) return true;
    if (parsed.unroll_explicit != -1 && parsed.unroll_implicit != -1) {
      if (why) *why = "the root block carries both an explicit and an implicit unroll step";
      return false;
    }
    std::string current = root->block->name;
    try {
      ir::BlockRV root_rv = sch->GetBlock(current);
      if (parsed.max_parallel_extent != -1) sch->Unannotate(root_rv, ann::kParallel);
      if (parsed.max_vectorize_extent != -1) sch->Unannotate(root_rv, ann::kVectorize);
      if (parsed.unroll_explicit != -1) sch->Unannotate(root_rv, ann::kUnrollExplicit);
      if (parsed.unroll_implicit != -1) sch->Unannotate(root_rv, ann::kUnrollImplicit);
      for (ir::BlockRV block : sch->GetChildBlocks(root_rv)) {
        current = sch->NameOf(block);
        std::vector<ir::LoopRV> loops = sch->GetLoops(block);
        if (loops.empty()) continue;
        Parsed p = parsed;
        Adjust(*sch, block, loops, &p);
        Rewrite(*sch, block, std::move(loops), p);
      }
    } catch (const ir::ScheduleError& e) {
      if (why) *why = "block '" + current + "': " + e.what();
      return false;
    }
    return true;
  }
};

}  // namespace

PostprocPtr MakeRewriteParallelVectorizeUnroll() {
  return std::make_shared<RewriteParallelVectorizeUnroll>();
}

}  // namespace kiln::search
