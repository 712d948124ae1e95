// compute_inline: replaces every read of a block's output by the expression
// that computes it, then removes the block (TVM's ComputeInline).
#include "ir/schedule/primitive/compute_inline.h"

#include "ir/op.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/compute_inline_util.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/substitute.h"

namespace kiln::ir {

namespace {

constexpr char kPrim[] = "compute_inline";

using inline_util::Site;

// Loads of the inlined buffer become the producer's value with its iteration
// variables replaced by the load's indices.
class ComputeInliner : public inline_util::ScopeRewriter {
 public:
  ComputeInliner(Buffer buffer, const BlockNode* scope, Stmt removed, Expr value,
                 std::vector<const VarNode*> dim_vars, VarMap fixed)
      : ScopeRewriter(std::move(buffer), scope, std::move(removed)),
        value_(std::move(value)),
        dim_vars_(std::move(dim_vars)),
        fixed_(std::move(fixed)) {}

 protected:
  Expr VisitBufferLoad(const Expr& e, const BufferLoadNode* op) override {
    Expr visited = IRMutator::VisitBufferLoad(e, op);
    const auto* load = visited.as<BufferLoadNode>();
    if (!load->buffer.same_as(buffer_)) return visited;
    VarMap sub = fixed_;
    for (size_t d = 0; d < dim_vars_.size(); ++d) {
      if (dim_vars_[d] != nullptr) sub[dim_vars_[d]] = load->indices[d];
    }
    return Substitute(value_, sub);
  }

 private:
  Expr value_;
  std::vector<const VarNode*> dim_vars_;  // per buffer dimension: the iter var indexing it
  VarMap fixed_;                          // unit iter vars absent from the indices
};

// Checks everything, then (unless check_only) returns the new function body.
Stmt ComputeInlineImpl(const StmtPath& path, bool check_only) {
  Site site = inline_util::LocateSite(kPrim, path);
  const BlockNode* block = site.block;
  const std::string& name = block->name;
  if (block->init) {
    throw ScheduleError(kPrim, "block " + name +
                                   " has an init statement (it is a reduction block); only a "
                                   "block computing each element once can be inlined");
  }
  if (block->writes.size() != 1) {
    throw ScheduleError(kPrim, "block " + name + " writes " + std::to_string(block->writes.size()) +
                                   " buffer regions; an inlined block may write only one");
  }
  const Buffer& buffer = block->writes[0].buffer;
  inline_util::CheckStagePipeline(kPrim, site);
  if (inline_util::IsOutput(site, block)) {
    throw ScheduleError(kPrim, "block " + name + " is an output block: it writes buffer " +
                                   buffer.name() + ", which is not allocated in its scope (block " +
                                   site.scope->name + ")");
  }
  inline_util::CheckComplete(kPrim, site, site.realize);

  // The body must be B[v...] = f(...) with the store indices a bijection of
  // the iteration variables: each index a distinct iteration variable or a
  // constant, every variable not used as an index a unit one.
  const auto* store = block->body.as<BufferStoreNode>();
  const std::string pattern =
      "the body of block " + name +
      " is not a single store indexed by its iteration variables (B[v_0, v_1, ...] = f(...), "
      "each index a distinct iteration variable)";
  if (store == nullptr || !store->buffer.same_as(buffer)) throw ScheduleError(kPrim, pattern);
  std::vector<const VarNode*> dim_vars(store->indices.size(), nullptr);
  std::vector<bool> used(block->iter_vars.size(), false);
  for (size_t d = 0; d < store->indices.size(); ++d) {
    const Expr& idx = store->indices[d];
    int64_t c;
    if (AsConstInt(idx, &c)) continue;
    const auto* v = idx.as<VarNode>();
    size_t k = 0;
    while (k < block->iter_vars.size() && block->iter_vars[k].var.get() != v) ++k;
    if (v == nullptr || k == block->iter_vars.size() || used[k]) {
      throw ScheduleError(kPrim, pattern + "; index " + std::to_string(d) + " is not");
    }
    used[k] = true;
    dim_vars[d] = v;
  }
  VarMap fixed;
  for (size_t k = 0; k < block->iter_vars.size(); ++k) {
    if (used[k]) continue;
    const IterVar& iv = block->iter_vars[k];
    int64_t mn;
    if (!IsConstInt(iv.dom.extent, 1) || !AsConstInt(iv.dom.min, &mn)) {
      throw ScheduleError(kPrim, pattern + "; iteration variable " + iv.var.name() +
                                     " indexes no dimension of " + buffer.name());
    }
    fixed[iv.var.get()] = iv.dom.min;
  }
  if (inline_util::LoadsFrom(store->value, buffer.get())) {
    throw ScheduleError(kPrim,
                        "block " + name + " reads buffer " + buffer.name() + ", which it writes");
  }

  // The value is evaluated where the consumers read it, later than the
  // producer ran: nothing after the producer may change what it reads.
  std::vector<const BufferNode*> inputs = inline_util::LoadedBuffers(store->value);
  for (size_t i = site.position + 1; i < site.siblings.size(); ++i) {
    const BlockNode* later = site.siblings[i]->block.get();
    for (const BufferNode* in : inputs) {
      if (inline_util::Touches(later->writes, in)) {
        throw ScheduleError(
            kPrim, "the scope of block " + name + " is not a stage pipeline: block " + later->name +
                       " writes buffer " + in->name + " after " + name + " reads it");
      }
    }
  }

  Stmt removed = inline_util::RemovalRoot(kPrim, site);
  if (check_only) return Stmt();
  ComputeInliner inliner(buffer, site.scope, removed, store->value, std::move(dim_vars),
                         std::move(fixed));
  return inliner.Run(site);
}

}  // namespace

bool CanComputeInline(const PrimFunc& /*func*/, const StmtPath& block_path, std::string* why) {
  return inline_util::Feasible(&ComputeInlineImpl, block_path, why);
}

bool CanComputeInline(const Schedule& sch, BlockRV block, std::string* why) {
  return inline_util::Feasible(&ComputeInlineImpl, sch, block, why);
}

void Schedule::ComputeInline(BlockRV block) {
  SetBody(ComputeInlineImpl(PathOf(block), /*check_only=*/false));
  Record(instruction_kinds::ComputeInline().name, {InstArg::Of(block.ref())},
         nlohmann::json::array(), {});
}

namespace instruction_kinds {

const InstructionKind& ComputeInline() {
  static const InstructionKind k =
      inline_util::InlineKind("ComputeInline", &Schedule::ComputeInline);
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
