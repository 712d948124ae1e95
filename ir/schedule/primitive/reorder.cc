// reorder: permute loops that lie in one single-branch chain of nested loops.
//
// Loops between the outermost and innermost listed loops that are not listed
// keep their places; the listed ones take the listed order. Blocks under the
// chain need affine bindings and only data-parallel / reduction iter vars,
// so that the iteration order is free to change.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ir/op.h"
#include "ir/schedule/analysis.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/schedule.h"
#include "ir/substitute.h"

namespace kiln::ir {

namespace {

constexpr const char* kPrimitive = "reorder";

const char* IterTypeWord(IterType t) {
  switch (t) {
    case IterType::kDataPar:
      return "data-parallel";
    case IterType::kCommReduce:
      return "reduction";
    case IterType::kOrdered:
      return "ordered (scan)";
    case IterType::kOpaque:
      return "opaque";
  }
  return "unknown";
}

}  // namespace

void Schedule::Reorder(const std::vector<LoopRV>& ordered_loops) {
  std::vector<const ForNode*> loops;
  std::vector<StmtPath> paths;
  loops.reserve(ordered_loops.size());
  paths.reserve(ordered_loops.size());
  for (LoopRV rv : ordered_loops) {
    paths.push_back(PathOf(rv));  // one search gives both the loop and its path
    const ForNode& loop = *paths.back().back().as<ForNode>();
    if (std::find(loops.begin(), loops.end(), &loop) != loops.end()) {
      throw ScheduleError(kPrimitive,
                          "loop " + loop.loop_var.name() + " appears twice in the list");
    }
    loops.push_back(&loop);
  }
  if (loops.size() > 1) {
    // The innermost listed loop is the one with the longest path; every other
    // listed loop must enclose it within the same block scope.
    size_t bottom = 0;
    for (size_t i = 1; i < paths.size(); ++i) {
      if (paths[i].size() > paths[bottom].size()) bottom = i;
    }
    const StmtPath& bpath = paths[bottom];
    const std::string bname = loops[bottom]->loop_var.name();
    size_t top_index = bpath.size() - 1;
    for (size_t i = 0; i < loops.size(); ++i) {
      if (i == bottom) continue;
      auto it = std::find_if(bpath.begin(), bpath.end(),
                             [&](const Stmt& s) { return s.get() == loops[i]; });
      if (it == bpath.end()) {
        throw ScheduleError(kPrimitive, "loops " + loops[i]->loop_var.name() + " and " + bname +
                                            " are not in one chain of nested loops");
      }
      top_index = std::min(top_index, static_cast<size_t>(it - bpath.begin()));
    }
    // Every statement from the top loop down to the bottom one must be a loop
    // whose body is exactly the next one.
    for (size_t i = top_index; i + 1 < bpath.size(); ++i) {
      const auto* l = bpath[i].as<ForNode>();
      const Stmt& next = bpath[i + 1];
      if (l == nullptr) {
        const auto* r = bpath[i].as<BlockRealizeNode>();
        throw ScheduleError(kPrimitive, "loops " + bpath[top_index].as<ForNode>()->loop_var.name() +
                                            " and " + bname +
                                            " are not in one chain of nested loops: " +
                                            (r ? "block " + r->block->name + " lies between them"
                                               : "an if-then-else lies between them"));
      }
      if (next.kind() == StmtKind::kSeqStmt || !l->body.same_as(next)) {
        throw ScheduleError(kPrimitive,
                            "loops " + bpath[top_index].as<ForNode>()->loop_var.name() + " and " +
                                bname + " are not in one chain of nested loops: the body of loop " +
                                l->loop_var.name() + " has several statements");
      }
    }
    // Blocks under the chain: iteration order must be free to change.
    for (const BlockRealizeNode* r : BlocksInScope(bpath.back())) {
      const BlockNode* b = r->block.get();
      for (const IterVar& iv : b->iter_vars) {
        if (iv.iter_type != IterType::kDataPar && iv.iter_type != IterType::kCommReduce) {
          throw ScheduleError(kPrimitive, "block " + b->name + " under the loops has iter var " +
                                              iv.var.name() + " of type " +
                                              IterTypeWord(iv.iter_type) +
                                              "; only data-parallel and reduction iter vars "
                                              "can be reordered");
        }
      }
      std::string why;
      if (!IsAffineBinding(*FindBlockPath(func_, b->name), &why)) {
        throw ScheduleError(
            kPrimitive,
            "block " + b->name + " under the loops has a non-affine binding (" + why + ")");
      }
    }
    // Rebuild the chain bottom-up: listed positions take the listed loops in
    // order; outer loops must not depend on loops now placed inside them.
    std::unordered_set<const ForNode*> listed(loops.begin(), loops.end());
    std::vector<const ForNode*> chain;
    chain.reserve(bpath.size() - top_index);
    for (size_t i = top_index; i < bpath.size(); ++i) chain.push_back(bpath[i].as<ForNode>());
    std::vector<const ForNode*> placed;
    placed.reserve(chain.size());
    size_t next_listed = 0;
    for (const ForNode* l : chain) placed.push_back(listed.count(l) ? loops[next_listed++] : l);
    std::unordered_set<const VarNode*> inner_vars;
    Stmt body = chain.back()->body;
    for (size_t i = placed.size(); i-- > 0;) {
      const ForNode* l = placed[i];
      const VarNode* used = nullptr;
      auto uses_inner = [&](const VarNode* v) {
        if (inner_vars.count(v)) {
          used = v;
          return true;
        }
        return false;
      };
      if (UsesVar(l->min, uses_inner) || UsesVar(l->extent, uses_inner)) {
        throw ScheduleError(kPrimitive, "the range of loop " + l->loop_var.name() +
                                            " depends on loop " + used->name +
                                            ", which the new order places inside it");
      }
      inner_vars.insert(l->loop_var.get());
      auto n = MakeNode<ForNode>(*l);
      n->body = body;
      body = Stmt(std::move(n));
    }
    SetBody(ReplaceAlongPath(StmtPath(bpath.begin(), bpath.begin() + top_index + 1), body));
  }
  std::vector<InstArg> inputs;
  inputs.reserve(ordered_loops.size());
  for (LoopRV l : ordered_loops) inputs.push_back(InstArg::Of(l.ref()));
  Record(instruction_kinds::Reorder().name, std::move(inputs), nlohmann::json::array(), {});
}

namespace instruction_kinds {

const InstructionKind& Reorder() {
  static const InstructionKind k = kind_definition::DefineKind(
      "Reorder", {},
      [](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectAttrs(0);
        std::vector<LoopRV> loops;
        for (size_t i = 0; i < a.size(); ++i) loops.push_back(a.Loop(i));
        sch.Reorder(loops);
        return {};
      },
      [](kind_definition::PyCall& py) {
        for (const auto& s : py.in) py.Positional(s);
      });
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
