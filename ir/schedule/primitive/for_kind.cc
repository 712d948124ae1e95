// parallel, vectorize, bind, unroll: change a loop's kind in place.
//
// The loop keeps its variable, so every handle to it stays valid. Parallel,
// vectorize and bind change the order in which iterations may run, so they
// are legal only where the iterations are independent:
//   - the data flow under the loop is self-contained in each iteration: a
//     block under the loop reads, of what other blocks under the loop write,
//     only what the same iteration writes (region cover, CheckSelfContained
//     below);
//   - the loop's child blocks are complete or reduction blocks (compact
//     data flow, as TVM has it);
//   - every block under the loop has an affine binding, except a block whose
//     instances are idempotent (data-parallel, each instance writes its own
//     single elements, reads nothing a block under the loop writes,
//     HasIdempotentInstances below): running such an instance
//     twice, or from two threads at once, stores the same value again, so a
//     binding that repeats instances is harmless. This is the shared-memory
//     fetch of a padded convolution input on GPU, whose halo makes the
//     binding overlap between tiles (TVM 0.27 drops the affine check for
//     these primitives altogether; Kiln keeps it for every block that could
//     accumulate or collide);
//   - the loop variable feeds only data-parallel block iterators (bind to
//     threadIdx.* may also feed reduction iterators: TVM's cross-thread
//     reduction, which its lowering turns into a reduction across threads).
// Unroll does not change the iteration order and has no preconditions.
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>

#include "ir/functor.h"
#include "ir/op.h"
#include "ir/schedule/analysis.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/schedule_mutator.h"
#include "ir/substitute.h"

namespace kiln::ir {

namespace {

// The thread axes TVM's ThreadScope accepts (and the verifier knows).
bool IsThreadAxis(const std::string& s) {
  static const std::set<std::string> kAxes = {
      "blockIdx.x",  "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y",
      "threadIdx.z", "vthread",    "vthread.x",  "vthread.y",   "vthread.z"};
  return kAxes.count(s) > 0;
}

bool IsThreadIdx(const std::string& s) { return s.rfind("threadIdx.", 0) == 0; }

bool UsesVar(const Expr& e, const VarNode* v) {
  struct Finder : IRVisitor {
    const VarNode* target;
    bool found = false;
    void VisitVar(const VarNode* op) override { found = found || op == target; }
  } finder;
  finder.target = v;
  finder.VisitExpr(e);
  return finder.found;
}

// Whether a loop enclosing the loop at `loop_path`, or one inside it, binds
// `tag` (nested loops cannot share a thread axis), except a threadIdx loop
// nested in one of the same extent: both name the same threads, which is how
// a cooperative fetch under a compute's thread loop is bound (TVM's GPU
// schedules do this).
bool OtherLoopBinds(const StmtPath& loop_path, const std::string& tag) {
  const ForNode* self = loop_path.back().as<ForNode>();
  const bool thread = tag.rfind("threadIdx", 0) == 0;
  int64_t extent = -1;
  if (!AsConstInt(self->extent, &extent)) extent = -1;
  // `outer` encloses `inner`; both bind `tag`.
  auto conflicts = [&](const ForNode* outer, const ForNode* inner) {
    int64_t other = -2;
    if (!AsConstInt((outer == self ? inner : outer)->extent, &other)) other = -2;
    const VarNode* v = outer->loop_var.get();
    return !thread || other != extent ||
           UsesVar(inner->body, [v](const VarNode* u) { return u == v; });
  };
  for (size_t i = 0; i + 1 < loop_path.size(); ++i) {
    const auto* f = loop_path[i].as<ForNode>();
    if (f && f->for_kind == ForKind::kThreadBinding && f->thread_tag == tag && conflicts(f, self)) {
      return true;
    }
  }
  struct Finder : IRVisitor {
    std::function<bool(const ForNode*)> conflicts;
    bool found = false;
    void VisitFor(const ForNode* op) override {
      if (conflicts(op)) found = true;
      IRVisitor::VisitFor(op);
    }
  } finder;
  finder.conflicts = [&](const ForNode* f) {
    return f->for_kind == ForKind::kThreadBinding && f->thread_tag == tag && conflicts(self, f);
  };
  finder.VisitStmt(loop_path.back().as<ForNode>()->body);
  return finder.found;
}

std::string Q(const std::string& s) { return "'" + s + "'"; }

// Buffers written by some block under `loop`, nested blocks included.
std::set<const BufferNode*> WrittenUnder(const ForNode& loop) {
  struct Collector : IRVisitor {
    std::set<const BufferNode*> written;
    void VisitBlock(const BlockNode* op) override {
      for (const BufferRegion& w : op->writes) written.insert(w.buffer.get());
      IRVisitor::VisitBlock(op);
    }
  } c;
  c.VisitStmt(loop.body);
  return std::move(c.written);
}

// Whether running any instance of `b` again, or concurrently with itself,
// anywhere in the iterations of the loop, changes nothing:
//   - every iterator is data-parallel;
//   - each buffer is written through one region, a single element whose
//     indices are distinct iterators (plus constants) covering all of them,
//     so distinct instances write distinct elements;
//   - no block under the loop (`b` included) writes a buffer `b` reads, so
//     every run of an instance, in any iteration and on any thread, reads
//     the same values and stores the same value.
bool HasIdempotentInstances(const BlockNode& b, const std::set<const BufferNode*>& written) {
  if (b.writes.empty()) return false;
  for (const IterVar& iv : b.iter_vars) {
    if (iv.iter_type != IterType::kDataPar) return false;
  }
  for (const BufferRegion& r : b.reads) {
    if (written.count(r.buffer.get()) > 0) return false;
  }
  std::set<const BufferNode*> write_buffers;
  for (const BufferRegion& w : b.writes) {
    if (!write_buffers.insert(w.buffer.get()).second) return false;
    std::set<const VarNode*> seen;
    for (const Range& dim : w.region) {
      if (!IsConstInt(dim.extent, 1)) return false;
      Expr index = dim.min;
      if (const auto* add = index.as<BinaryNode>();
          add != nullptr && add->kind == ExprKind::kAdd && add->b.as<IntImmNode>() != nullptr) {
        index = add->a;
      }
      const auto* v = index.as<VarNode>();
      if (v == nullptr) {
        if (index.as<IntImmNode>() != nullptr) continue;
        return false;
      }
      bool is_iter = false;
      for (const IterVar& iv : b.iter_vars) is_iter = is_iter || iv.var.get() == v;
      if (!is_iter || !seen.insert(v).second) return false;
    }
    if (seen.size() != b.iter_vars.size()) return false;
  }
  return true;
}

class ParallelChecker {
 public:
  ParallelChecker(Schedule* sch, const std::string& op, const StmtPath& loop_path,
                  const std::string& thread_axis)
      : sch_(sch), op_(op), path_(loop_path), thread_axis_(thread_axis) {
    loop_ = path_.back().as<ForNode>();
  }

  void Check() {
    CheckScope();
    // Every block under the loop, nested ones included.
    CheckBlocksUnder(path_);
  }

 private:
  [[noreturn]] void Fail(const std::string& msg) const { throw ScheduleError(op_, msg); }

  std::string LoopName() const { return loop_->loop_var.name(); }

  // IsAffineBinding, remembered for the schedule's current function (the
  // scope check and the per-block check both need it, and vectorize after
  // parallel asks again about the same blocks).
  bool Affine(const StmtPath& block_path, std::string* why) {
    ScheduleFact fact =
        ScheduleFact::AffineBinding(block_path.back().as<BlockRealizeNode>()->block->name);
    if (ScheduleMutator(*sch_).KnowsFact(fact)) return true;
    if (!IsAffineBinding(block_path, why)) return false;
    ScheduleMutator(*sch_).NoteFact(std::move(fact));
    return true;
  }

  // Self-contained data flow in each iteration of the loop, and compact data
  // flow of the loop's subtree.
  void CheckScope() {
    CheckSelfContained();
    StmtPath prefix(path_.begin(), path_.end() - 1);
    for (const StmtPath& rel : BlockPathsInScope(path_.back())) {
      StmtPath block_path = prefix;
      block_path.insert(block_path.end(), rel.begin(), rel.end());
      const BlockNode* b = block_path.back().as<BlockRealizeNode>()->block.get();
      ScheduleFact compact = ScheduleFact::CompactDataFlow(b->name);
      if (ScheduleMutator(*sch_).KnowsFact(compact)) continue;
      std::string why_complete, why_reduction;
      if (IsCompleteBlock(block_path, &why_complete)) {
        ScheduleMutator(*sch_).NoteFact(std::move(compact));
        continue;
      }
      // The reduction check starts with the binding, which CheckBlock needs
      // as well: make it once. A non-affine binding is left to
      // IsReductionBlock to explain.
      std::string unused;
      bool affine = Affine(block_path, &unused);
      if (IsReductionBlock(block_path, &why_reduction, /*binding_known_affine=*/affine)) {
        ScheduleMutator(*sch_).NoteFact(std::move(compact));
        continue;
      }
      Fail("loop " + LoopName() + " does not have compact data flow: its child block " +
           Q(b->name) + " is neither a complete block (" + why_complete +
           ") nor a reduction block (" + why_reduction + ")");
    }
  }

  // Every block under the loop reads, of what other blocks under the loop
  // write, only what they write in the same iteration (region cover with
  // the lowest common ancestor at or below the loop), so iterations do not
  // feed each other and may run in any order. Producer/consumer pairs with
  // one side outside the loop need no proof: that side runs wholly before or
  // after the loop, whatever order its iterations take. (TVM checks no
  // region cover here; Kiln's older rule, the whole scope a stage pipeline,
  // also refused pairs outside the loop whose regions the analysis cannot
  // bound, such as a transposed convolution's halo fetch.)
  void CheckSelfContained() {
    ScheduleFact fact = ScheduleFact::SelfContainedLoop(loop_->loop_var);
    if (ScheduleMutator(*sch_).KnowsFact(fact)) return;
    StmtPath scope_path = ScopePathOf(path_);
    const StmtNode* loop = path_.back().get();
    const std::vector<StmtPath> scope_blocks = BlockPathsInScope(scope_path.back());
    for (const StmtPath& rel : BlockPathsInScope(path_.back())) {
      const auto* consumer = rel.back().as<BlockRealizeNode>();
      std::string why;
      if (!IsRegionCovered(scope_path, consumer, &why, loop, &scope_blocks)) {
        Fail("iterations of loop " + LoopName() + " depend on each other: " + why);
      }
    }
    ScheduleMutator(*sch_).NoteFact(std::move(fact));
  }

  // Checks each block under the statement at the end of `path`.
  void CheckBlocksUnder(const StmtPath& path) {
    StmtPath prefix(path.begin(), path.end() - 1);
    for (const StmtPath& rel : BlockPathsInScope(path.back())) {
      StmtPath block_path = prefix;
      block_path.insert(block_path.end(), rel.begin(), rel.end());
      CheckBlock(block_path);
      CheckBlocksUnder(block_path);
    }
  }

  void CheckBlock(const StmtPath& block_path) {
    const auto* realize = block_path.back().as<BlockRealizeNode>();
    const BlockNode* b = realize->block.get();
    std::string why;
    if (!Affine(block_path, &why) && !HasIdempotentInstances(*b, WrittenUnderLoop())) {
      Fail("block " + Q(b->name) + " under loop " + LoopName() +
           " does not have an affine binding (" + why + ")");
    }
    const VarNode* v = loop_->loop_var.get();
    for (size_t i = 0; i < b->iter_vars.size() && i < realize->iter_values.size(); ++i) {
      const IterVar& iv = b->iter_vars[i];
      if (iv.iter_type == IterType::kDataPar) continue;
      if (!UsesVar(realize->iter_values[i], v)) continue;
      if (iv.iter_type == IterType::kCommReduce && IsThreadIdx(thread_axis_)) continue;
      std::string kind = iv.iter_type == IterType::kCommReduce ? "reduction" : "non-data-parallel";
      std::string hint =
          op_ == "bind" ? " (only a threadIdx.* axis may take a reduction loop)" : "";
      Fail("loop " + LoopName() + " is bound to " + kind + " iteration variable " + iv.var.name() +
           " of block " + b->name + hint);
    }
  }

  // WrittenUnder(loop), computed when a non-affine binding first needs it.
  const std::set<const BufferNode*>& WrittenUnderLoop() {
    if (!written_) written_ = WrittenUnder(*loop_);
    return *written_;
  }

  Schedule* sch_;
  std::string op_;
  const StmtPath& path_;
  std::string thread_axis_;
  const ForNode* loop_ = nullptr;
  std::optional<std::set<const BufferNode*>> written_;
};

// Rebuilds the loop at `path` with a new kind and thread tag.
Stmt WithKind(const StmtPath& path, ForKind kind, std::string tag) {
  auto n = MakeNode<ForNode>(*path.back().as<ForNode>());
  n->for_kind = kind;
  n->thread_tag = std::move(tag);
  return ReplaceAlongPath(path, Stmt(std::move(n)));
}

}  // namespace

void Schedule::Parallel(LoopRV loop) {
  StmtPath path = PathOf(loop);
  ParallelChecker(this, "parallel", path, "").Check();
  SetBodyKeepingFacts(WithKind(path, ForKind::kParallel, ""));
  Record(instruction_kinds::Parallel().name, {InstArg::Of(loop.ref())}, nlohmann::json::array(),
         {});
}

void Schedule::Vectorize(LoopRV loop) {
  StmtPath path = PathOf(loop);
  const ForNode* f = path.back().as<ForNode>();
  int64_t extent;
  if (!AsConstInt(f->extent, &extent)) {
    throw ScheduleError("vectorize", "loop " + f->loop_var.name() +
                                         " has a non-constant extent; vector lanes are fixed");
  }
  ParallelChecker(this, "vectorize", path, "").Check();
  SetBodyKeepingFacts(WithKind(path, ForKind::kVectorized, ""));
  Record(instruction_kinds::Vectorize().name, {InstArg::Of(loop.ref())}, nlohmann::json::array(),
         {});
}

void Schedule::Bind(LoopRV loop, const std::string& thread_axis) {
  StmtPath path = PathOf(loop);
  const ForNode* f = path.back().as<ForNode>();
  if (!IsThreadAxis(thread_axis)) {
    throw ScheduleError("bind", "unknown thread axis \"" + thread_axis + "\" for loop " +
                                    f->loop_var.name() +
                                    " (expected blockIdx.x/y/z, threadIdx.x/y/z or vthread.x/y/z)");
  }
  if (OtherLoopBinds(path, thread_axis)) {
    throw ScheduleError("bind", "loop " + f->loop_var.name() + " cannot be bound to " +
                                    thread_axis + ": a loop enclosing or inside it is bound to " +
                                    thread_axis + " already");
  }
  ParallelChecker(this, "bind", path, thread_axis).Check();
  SetBodyKeepingFacts(WithKind(path, ForKind::kThreadBinding, thread_axis));
  Record(instruction_kinds::Bind().name, {InstArg::Of(loop.ref())},
         nlohmann::json::array({thread_axis}), {});
}

void Schedule::Unroll(LoopRV loop) {
  StmtPath path = PathOf(loop);
  SetBodyKeepingFacts(WithKind(path, ForKind::kUnrolled, ""));
  Record(instruction_kinds::Unroll().name, {InstArg::Of(loop.ref())}, nlohmann::json::array(), {});
}

namespace instruction_kinds {

namespace {

InstructionKind LoopKind(const std::string& name, void (Schedule::*fn)(LoopRV)) {
  return kind_definition::DefineKind(
      name, {},
      [fn](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(1);
        a.ExpectAttrs(0);
        (sch.*fn)(a.Loop(0));
        return {};
      },
      [](kind_definition::PyCall& py) { py.Arg("loop", py.in[0]); });
}

}  // namespace

const InstructionKind& Parallel() {
  static const InstructionKind k = LoopKind("Parallel", &Schedule::Parallel);
  return k;
}

const InstructionKind& Vectorize() {
  static const InstructionKind k = LoopKind("Vectorize", &Schedule::Vectorize);
  return k;
}

const InstructionKind& Unroll() {
  static const InstructionKind k = LoopKind("Unroll", &Schedule::Unroll);
  return k;
}

const InstructionKind& Bind() {
  static const InstructionKind k = kind_definition::DefineKind(
      "Bind", {},
      [](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(1);
        a.ExpectAttrs(1);
        sch.Bind(a.Loop(0), a.AttrStr(0));
        return {};
      },
      [](kind_definition::PyCall& py) {
        py.Arg("loop", py.in[0]).Arg("thread_axis", py.attrs[0].dump());
      },
      [](const std::vector<InstArg>&, const nlohmann::json& attrs) -> std::string {
        if (!attrs.is_array() || attrs.size() != 1 || !attrs[0].is_string()) {
          return "Bind takes one attribute, the thread axis name";
        }
        return "";
      });
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
