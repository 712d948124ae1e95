// A Schedule: a function being transformed, the random-variable handles that
// name its blocks, loops and sampled values, its RNG, and the trace of every
// primitive applied so far.
//
// Handles stay valid across primitives: a block is found by its (unique) name
// and a loop by its loop variable, both of which survive the rewrites that do
// not remove them. A handle to something a primitive removed fails loudly
// with a ScheduleError saying so.
//
// Primitive implementations live one per file in ir/schedule/primitive/;
// each checks its preconditions as TVM's does and raises ScheduleError.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/prim_func.h"
#include "ir/schedule/index_map.h"
#include "ir/schedule/instruction.h"
#include "ir/schedule/random_engine.h"
#include "ir/schedule/schedule_error.h"
#include "ir/schedule/schedule_fact.h"
#include "ir/schedule/stmt_path.h"
#include "ir/schedule/trace.h"

namespace kiln::ir {

// A split factor: inferred (monostate), a constant, or a sampled value.
using Factor = std::variant<std::monostate, int64_t, ExprRV>;
// An annotation value.
using AnnValue = std::variant<int64_t, double, std::string, ExprRV>;
using BlockOrLoop = std::variant<BlockRV, LoopRV>;

class Schedule {
 public:
  // Takes a copy of `func` (trees are shared, never mutated). seed as in
  // RandomEngine::Seed.
  explicit Schedule(PrimFunc func, int64_t seed = 1);

  const PrimFunc& func() const { return func_; }
  const Trace& trace() const { return trace_; }
  // The trace, moved out of a schedule that is done (saves copying every
  // instruction of a replayed candidate).
  Trace TakeTrace() && { return std::move(trace_); }
  RandomEngine& rng() { return rng_; }
  void Seed(int64_t seed) { rng_.Seed(seed); }
  int64_t ForkSeed() { return rng_.ForkSeed(); }
  // An independent copy: same function, symbols and trace; a forked RNG.
  Schedule Copy();

  // ---- Reading handles --------------------------------------------------
  // Each throws ScheduleError if the handle is of the wrong kind, unknown,
  // or names something that no longer exists.
  const BlockRealizeNode& GetRealize(BlockRV b) const;
  const BlockNode& Get(BlockRV b) const { return *GetRealize(b).block.get(); }
  const ForNode& Get(LoopRV l) const;
  int64_t Get(ExprRV v) const;
  StmtPath PathOf(BlockRV b) const;
  StmtPath PathOf(LoopRV l) const;
  // Names for messages: the block name, or the loop variable's name.
  std::string NameOf(BlockRV b) const;
  std::string NameOf(LoopRV l) const;
  bool HasBlock(const std::string& name) const;
  // The special loop handles sample_compute_location returns.
  bool IsInlineMark(LoopRV l) const;
  bool IsRootMark(LoopRV l) const;

  // ---- Sampling (sampling.cc) --------------------------------------------
  ExprRV SampleCategorical(const std::vector<int64_t>& candidates,
                           const std::vector<double>& probs,
                           std::optional<int64_t> decision = std::nullopt);
  std::vector<ExprRV> SamplePerfectTile(LoopRV loop, int n, int max_innermost_factor = 16,
                                        std::optional<std::vector<int64_t>> decision = std::nullopt);
  LoopRV SampleComputeLocation(BlockRV block, std::optional<int64_t> decision = std::nullopt);
  // The decisions SampleComputeLocation could draw for `block` now, ascending
  // (-2 inline, -1 root, k >= 0 a loop of the first consumer).
  std::vector<int64_t> ComputeLocationCandidates(BlockRV block) const;

  // ---- Lookup (get_block_loop.cc) ----------------------------------------
  BlockRV GetBlock(const std::string& name, const std::string& func_name = "main");
  std::vector<LoopRV> GetLoops(BlockRV block);
  std::vector<BlockRV> GetChildBlocks(BlockOrLoop scope);
  std::vector<BlockRV> GetProducers(BlockRV block);
  std::vector<BlockRV> GetConsumers(BlockRV block);

  // ---- Loop transformations ------------------------------------------------
  std::vector<LoopRV> Split(LoopRV loop, const std::vector<Factor>& factors,
                            bool preserve_unit_iters = true, bool disable_predication = false);
  LoopRV Fuse(const std::vector<LoopRV>& loops, bool preserve_unit_iters = true);
  void Reorder(const std::vector<LoopRV>& ordered_loops);
  LoopRV AddUnitLoop(BlockOrLoop target);

  // ---- Loop kinds and annotations ----------------------------------------
  void Parallel(LoopRV loop);
  void Vectorize(LoopRV loop);
  void Unroll(LoopRV loop);
  void Bind(LoopRV loop, const std::string& thread_axis);
  void Annotate(BlockOrLoop target, const std::string& key, const AnnValue& value);
  void Unannotate(BlockOrLoop target, const std::string& key);

  // ---- Caching ----------------------------------------------------------
  BlockRV CacheRead(BlockRV block, int read_buffer_index, const std::string& storage_scope,
                    const std::vector<BlockRV>& consumer_blocks = {});
  BlockRV CacheWrite(BlockRV block, int write_buffer_index, const std::string& storage_scope,
                     const std::vector<BlockRV>& consumer_blocks = {});

  // ---- Compute location --------------------------------------------------
  void ComputeAt(BlockRV block, LoopRV loop, bool preserve_unit_loops = false, int index = -1);
  void ReverseComputeAt(BlockRV block, LoopRV loop, bool preserve_unit_loops = false,
                        int index = -1);
  void ComputeInline(BlockRV block);
  void ReverseComputeInline(BlockRV block);

  // ---- Reductions ---------------------------------------------------------
  BlockRV DecomposeReduction(BlockRV block, LoopRV loop);
  BlockRV RFactor(LoopRV loop, int factor_axis);

  // ---- Buffers and blocks --------------------------------------------------
  void SetScope(BlockRV block, int buffer_index, const std::string& storage_scope);
  void StorageAlign(BlockRV block, int buffer_index, int axis, int factor, int offset);
  BlockRV Blockize(LoopRV loop, bool preserve_unit_iters = true);
  // buffer_index_type is "read" or "write"; the map must be a bijection of
  // the buffer's index box (padding is refused).
  void TransformLayout(BlockRV block, int buffer_index, const std::string& buffer_index_type,
                       const IndexMap& index_map,
                       const std::optional<IndexMap>& pad_value = std::nullopt,
                       bool assume_injective_transform = false);

  // ---- Markers -------------------------------------------------------------
  void EnterPostproc();

  // The block or loop a BlockOrLoop handle names, as an InstArg.
  static InstArg Arg(BlockOrLoop t);

 private:
  // The implementation hooks of the primitives. Schedule's own members (one
  // primitive a file in ir/schedule/primitive/) use them directly; helper
  // code of the primitives that is not a member goes through
  // ScheduleMutator (schedule_mutator.h), the only friend.
  friend class ScheduleMutator;

  // Installs a new function body (after a primitive rebuilt the tree).
  // Either forgets every fact proved about the old function (see KnowsFact).
  void SetBody(Stmt body) {
    func_.body = std::move(body);
    facts_.clear();
    planned_move_.reset();
  }
  void SetFunc(PrimFunc f) {
    func_ = std::move(f);
    facts_.clear();
    planned_move_.reset();
  }
  // For a primitive that changed only loop kinds, thread tags or
  // annotations: no fact below depends on them, so the facts stay.
  void SetBodyKeepingFacts(Stmt body) {
    func_.body = std::move(body);
    planned_move_.reset();
  }

  // Facts proved about the current function (schedule_fact.h).
  bool KnowsFact(const ScheduleFact& fact) const;
  void NoteFact(ScheduleFact fact) { facts_.push_back(std::move(fact)); }
  BlockRV NewBlockRV(const std::string& block_name);
  // Re-points every block handle naming `from` at `to`, for a primitive that
  // renames a block it keeps (decompose_reduction's "<name>_update").
  void RenameBlockHandles(const std::string& from, const std::string& to);
  LoopRV NewLoopRV(const Var& loop_var);
  ExprRV NewExprRV(int64_t value);
  // A handle to the inline (true) or root (false) location mark
  // (sample_compute_location.cc).
  LoopRV NewLocationMarkRV(bool inline_mark);
  // Appends one instruction to the trace.
  void Record(const std::string& kind, std::vector<InstArg> inputs, nlohmann::json attrs,
              std::vector<RVRef> outputs, std::optional<nlohmann::json> decision = std::nullopt);

  enum class LoopMark : uint8_t { kNone, kInline, kRoot };
  struct Symbol {
    RVKind kind;
    std::string block_name;            // kBlock
    std::shared_ptr<const VarNode> loop_var;  // kLoop (unless a mark)
    LoopMark mark = LoopMark::kNone;   // kLoop
    int64_t value = 0;                 // kExpr
  };
  const Symbol& Lookup(RVRef ref, RVKind expected) const;
  LoopRV NewMarkRV(LoopMark mark);

  // The body compute_at would make of the current function, moving `block`
  // under the loop of `loop_var` (unit loops preserved, default position):
  // sample_compute_location builds it to check the location it picks, and
  // the compute_at that follows in every trace takes it instead of building
  // it again (compute_at.cc). Forgotten with any change of the body.
  struct PlannedMove {
    std::string block;
    const VarNode* loop_var = nullptr;
    Stmt body;
  };
  std::optional<PlannedMove> planned_move_;

  PrimFunc func_;
  RandomEngine rng_;
  Trace trace_;
  std::vector<Symbol> symbols_;
  std::vector<ScheduleFact> facts_;  // few: a vector beats a hash set
};

}  // namespace kiln::ir
