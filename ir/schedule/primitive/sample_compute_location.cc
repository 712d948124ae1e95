// sample_compute_location: draw where a block is computed, among the loops
// compute_at accepts (TVM's CollectComputeLocation):
//   -1     the root mark (leave the block where it is), always;
//   k >= 0 loop k of the first consumer's loop nest (outer to inner), for the
//          loops down to the consumers' lowest common loop, skipping unit
//          loops, stopping at the first spatial loop after a reduction loop
//          and before trailing non-spatial loops, and keeping only those
//          where compute_at (preserving unit loops) succeeds.
//   -2     the inline mark, first, when compute_inline would succeed.
// A replayed decision that is no longer a candidate snaps to the nearest
// smaller candidate, or to root.
#include <algorithm>

#include "ir/op.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/compute_at.h"
#include "ir/schedule/primitive/compute_inline.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/schedule.h"
#include "ir/substitute.h"

namespace kiln::ir {

namespace {

// The blocks under `s` not nested in another block (s itself if it is one).
void BlocksUnder(const Stmt& s, std::vector<const BlockRealizeNode*>* out) {
  if (!s.defined()) return;
  if (const auto* r = s.as<BlockRealizeNode>()) {
    out->push_back(r);
  } else if (const auto* l = s.as<ForNode>()) {
    BlocksUnder(l->body, out);
  } else if (const auto* seq = s.as<SeqStmtNode>()) {
    for (const auto& c : seq->seq) BlocksUnder(c, out);
  } else if (const auto* ite = s.as<IfThenElseNode>()) {
    BlocksUnder(ite->then_case, out);
    BlocksUnder(ite->else_case, out);
  }
}

// TVM's GetLoopIterType: how the blocks directly under `loop` use its variable.
IterType LoopIterType(const ForNode* loop) {
  int n_spatial = 0, n_reduce = 0, n_other = 0;
  const VarNode* var = loop->loop_var.get();
  auto is_var = [var](const VarNode* v) { return v == var; };
  std::vector<const BlockRealizeNode*> blocks;
  BlocksUnder(loop->body, &blocks);
  for (const BlockRealizeNode* r : blocks) {
    const BlockNode* b = r->block.get();
    for (size_t i = 0; i < b->iter_vars.size() && i < r->iter_values.size(); ++i) {
      if (!UsesVar(r->iter_values[i], is_var)) continue;
      switch (b->iter_vars[i].iter_type) {
        case IterType::kDataPar:
          ++n_spatial;
          break;
        case IterType::kCommReduce:
          ++n_reduce;
          break;
        default:
          ++n_other;
          break;
      }
    }
  }
  if (n_other || (n_spatial && n_reduce)) return IterType::kOpaque;
  return n_reduce ? IterType::kCommReduce : IterType::kDataPar;
}

struct Candidate {
  int64_t index;        // -2 inline, -1 root, k >= 0 a loop of the first consumer
  const ForNode* loop;  // null for the marks
  Stmt moved;           // for a loop: the body compute_at makes (TryMoveBlockUnderLoop)
};

// The loops of the first consumer's nest (outer to inner) that may hold the
// block by their position and kind, before asking compute_at: what
// CollectComputeLocation checks one by one.
std::vector<Candidate> EligibleLoops(const PrimFunc& f, const StmtPath& path) {
  std::vector<Candidate> out;
  const int scope = ScopeIndex(path);
  if (scope < 0) return out;
  const BlockNode* self = path.back().as<BlockRealizeNode>()->block.get();
  std::vector<const BlockNode*> consumers;
  bool after = false;
  for (const BlockRealizeNode* s : ChildBlockRealizes(path[scope])) {
    const BlockNode* other = s->block.get();
    if (other == self) {
      after = true;
      continue;
    }
    bool reads = std::any_of(other->reads.begin(), other->reads.end(), [&](const BufferRegion& r) {
      return std::any_of(self->writes.begin(), self->writes.end(),
                         [&](const BufferRegion& w) { return w.buffer.get() == r.buffer.get(); });
    });
    if (after && reads) consumers.push_back(other);
  }
  if (consumers.empty()) return out;

  // The deepest loop (inside the scope) above every consumer.
  std::vector<StmtPath> paths;
  for (const BlockNode* c : consumers) paths.push_back(*FindBlockPath(f, c->name));
  const ForNode* boundary = nullptr;
  for (size_t k = scope + 1;; ++k) {
    bool common = true;
    for (const auto& p : paths) {
      if (k + 1 >= p.size() || !p[k].same_as(paths[0][k])) common = false;
    }
    if (!common) break;
    if (const auto* l = paths[0][k].as<ForNode>()) boundary = l;
  }
  if (boundary == nullptr) return out;

  const std::vector<const ForNode*> loops = LoopsAbove(paths[0]);
  auto pos = std::find(loops.begin(), loops.end(), boundary);
  if (pos == loops.end()) return out;
  const size_t n_candidate = static_cast<size_t>(pos - loops.begin()) + 1;
  std::vector<IterType> types;
  int last_spatial = -1;
  for (size_t i = 0; i < n_candidate; ++i) {
    types.push_back(LoopIterType(loops[i]));
    if (types.back() == IterType::kDataPar) last_spatial = static_cast<int>(i);
  }
  bool visited_reduce = false;
  for (size_t i = 0; i < n_candidate; ++i) {
    if (IsConstInt(loops[i]->extent, 1)) continue;
    if (types[i] == IterType::kDataPar) {
      if (visited_reduce) break;
    } else {
      visited_reduce = true;
      if (static_cast<int>(i) > last_spatial) break;
    }
    out.push_back({static_cast<int64_t>(i), loops[i], Stmt()});
  }
  return out;
}

// Whether compute_at (unit loops preserved) accepts the candidate's loop;
// if so the candidate keeps the body it makes.
bool CanMoveUnder(const PrimFunc& f, const StmtPath& path, Candidate* c) {
  const BlockNode* self = path.back().as<BlockRealizeNode>()->block.get();
  std::optional<Stmt> moved =
      TryMoveBlockUnderLoop(f, self->name, c->loop->loop_var.get(), /*preserve_unit_loops=*/true,
                            /*reverse=*/false);
  if (!moved) return false;
  c->moved = std::move(*moved);
  return true;
}

std::vector<Candidate> CollectComputeLocation(const PrimFunc& f, const StmtPath& path) {
  std::vector<Candidate> out;
  if (CanComputeInline(f, path)) out.push_back({-2, nullptr, Stmt()});
  out.push_back({-1, nullptr, Stmt()});
  for (Candidate& c : EligibleLoops(f, path)) {
    if (CanMoveUnder(f, path, &c)) out.push_back(std::move(c));
  }
  return out;
}

// The candidate a replayed decision gives: the decision itself when it is a
// candidate, else the nearest smaller one, else root. The same answer as
// searching CollectComputeLocation's list, but compute_at is asked only
// about the loops it takes to find it (replaying a trace, as the
// evolutionary search does for every mutant, otherwise checks every loop).
Candidate DecidedLocation(const PrimFunc& f, const StmtPath& path, int64_t decision) {
  const Candidate root{-1, nullptr, Stmt()};
  if (decision == -1) return root;
  if (decision < -1) {
    if (decision == -2 && CanComputeInline(f, path)) return {-2, nullptr, Stmt()};
    return root;
  }
  std::vector<Candidate> loops = EligibleLoops(f, path);
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    if (it->index > decision) continue;
    if (CanMoveUnder(f, path, &*it)) return std::move(*it);
  }
  return root;
}

}  // namespace

LoopRV Schedule::NewLocationMarkRV(bool inline_mark) {
  return NewMarkRV(inline_mark ? LoopMark::kInline : LoopMark::kRoot);
}

std::vector<int64_t> Schedule::ComputeLocationCandidates(BlockRV block) const {
  std::vector<int64_t> out;
  for (const Candidate& c : CollectComputeLocation(func_, PathOf(block))) out.push_back(c.index);
  return out;
}

LoopRV Schedule::SampleComputeLocation(BlockRV block, std::optional<int64_t> decision) {
  const StmtPath path = PathOf(block);
  Candidate c;
  if (decision) {
    c = DecidedLocation(func_, path, *decision);
  } else {
    const std::vector<Candidate> candidates = CollectComputeLocation(func_, path);
    c = candidates[static_cast<size_t>(rng_.SampleInt(0, static_cast<int64_t>(candidates.size())))];
  }
  LoopRV out = c.loop ? NewLoopRV(c.loop->loop_var) : NewLocationMarkRV(c.index == -2);
  if (c.loop) {
    planned_move_ = PlannedMove{path.back().as<BlockRealizeNode>()->block->name,
                                c.loop->loop_var.get(), std::move(c.moved)};
  }
  Record(instruction_kinds::SampleComputeLocation().name, {InstArg::Of(block.ref())},
         nlohmann::json::array(), {out.ref()}, nlohmann::json(c.index));
  return out;
}

namespace instruction_kinds {

const InstructionKind& SampleComputeLocation() {
  static const InstructionKind k = kind_definition::DefineKind(
      "SampleComputeLocation", {/*is_pure=*/true, /*has_decision=*/true},
      [](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(1);
        a.ExpectAttrs(0);
        std::optional<int64_t> d;
        if (a.decision()) d = a.DecisionInt();
        return {sch.SampleComputeLocation(a.Block(0), d).ref()};
      },
      [](kind_definition::PyCall& py) {
        py.Arg("block", py.in[0]);
        if (py.decision) py.Arg("decision", py.decision->dump());
      });
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
