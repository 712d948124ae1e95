// fuse: a chain of perfectly nested loops becomes one loop over the product
// of their extents; each old variable is recovered with floordiv / floormod.
#include <string>
#include <unordered_set>

#include "ir/arith/analyzer.h"
#include "ir/op.h"
#include "ir/text/printer.h"
#include "ir/schedule/analysis.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/schedule.h"
#include "ir/substitute.h"

namespace kiln::ir {

namespace {

constexpr const char* kPrimitive = "fuse";

}  // namespace

LoopRV Schedule::Fuse(const std::vector<LoopRV>& loop_rvs, bool preserve_unit_iters) {
  if (loop_rvs.empty()) throw ScheduleError(kPrimitive, "no loops given; fuse needs at least one");
  std::vector<const ForNode*> loops;
  std::vector<StmtPath> paths;
  arith::Analyzer an;
  for (size_t i = 0; i < loop_rvs.size(); ++i) {
    StmtPath path = PathOf(loop_rvs[i]);
    const ForNode& loop = *path.back().as<ForNode>();
    const std::string name = loop.loop_var.name();
    for (size_t j = 0; j < loops.size(); ++j) {
      if (loops[j] == &loop) {
        throw ScheduleError(kPrimitive, "loop " + name + " appears twice in the list");
      }
    }
    if (!loop.annotations.empty() || loop.for_kind == ForKind::kThreadBinding) {
      throw ScheduleError(kPrimitive, "loop " + name +
                                          " has annotations or a thread binding; fuse loops "
                                          "before annotating or binding them");
    }
    if (i > 0) {
      const ForNode* outer = loops.back();
      const std::string outer_name = outer->loop_var.name();
      if (!IsAncestorLoop(outer, path)) {
        if (IsAncestorLoop(&loop, paths.back())) {
          throw ScheduleError(kPrimitive, "loops " + outer_name + " and " + name +
                                              " are not in order: " + name + " encloses " +
                                              outer_name + " (list the loops outer to inner)");
        }
        throw ScheduleError(kPrimitive, "loops " + outer_name + " and " + name +
                                            " are not consecutive: " + name +
                                            " is not nested inside " + outer_name);
      }
      const Stmt& parent = path[path.size() - 2];
      if (parent.get() != outer) {
        std::string between = parent.as<ForNode>() ? "loop " + parent.as<ForNode>()->loop_var.name()
                              : parent.as<BlockRealizeNode>()
                                  ? "block " + parent.as<BlockRealizeNode>()->block->name
                                  : "another statement";
        if (parent.kind() == StmtKind::kSeqStmt && path[path.size() - 3].get() == outer) {
          throw ScheduleError(kPrimitive, "loops " + outer_name + " and " + name +
                                              " are not perfectly nested: the body of loop " +
                                              outer_name + " has other statements besides loop " +
                                              name);
        }
        throw ScheduleError(kPrimitive, "loops " + outer_name + " and " + name +
                                            " are not consecutive: " + between +
                                            " lies between them");
      }
      for (const ForNode* o : loops) {
        auto uses = [&](const VarNode* v) { return v == o->loop_var.get(); };
        if (UsesVar(loop.min, uses) || UsesVar(loop.extent, uses)) {
          throw ScheduleError(kPrimitive, "the range of loop " + name + " depends on loop " +
                                              o->loop_var.name() + ", which is fused with it");
        }
      }
    }
    if (i == 0) {
      for (const auto& [v, r] : AllLoopsAbove(path)) an.Bind(v, r);
    }
    if (!an.CanProve(EQ(loop.min, IntImm(0, loop.min.dtype())))) {
      throw ScheduleError(kPrimitive, "loop " + name + " starts at " + ToText(loop.min) +
                                          "; only loops starting at 0 can be fused");
    }
    loops.push_back(&loop);
    paths.push_back(std::move(path));
  }

  const DataType dtype = loops[0]->loop_var.dtype();
  std::string fused_name = loops[0]->loop_var.name();
  for (size_t i = 1; i < loops.size(); ++i) fused_name += "_" + loops[i]->loop_var.name();
  Var fused(fused_name + "_fused", dtype);

  VarMap substitution;
  Expr rest = fused;
  Expr extent = IntImm(1, dtype);
  for (size_t i = loops.size(); i-- > 0;) {
    Expr ext = an.Simplify(loops[i]->extent);
    Expr value = IsConstInt(ext, 1) && !preserve_unit_iters ? IntImm(0, dtype)
                 : i == 0                                   ? rest
                                                            : FloorMod(rest, ext);
    substitution[loops[i]->loop_var.get()] = value;
    rest = FloorDiv(rest, ext);
    extent = extent * ext;
  }
  extent = an.Simplify(extent);

  Stmt body = SubstituteLoopVars(loops.back()->body, substitution);
  body = For(fused, IntImm(0, dtype), extent, ForKind::kSerial, body);
  std::vector<std::string> affine;
  body = SimplifyBlockBindings(body, LoopDomainOf(paths[0]), preserve_unit_iters, &affine);
  SetBody(ReplaceAlongPath(paths[0], body));
  // The parallel and vectorize checks after a fuse (the postprocessor's
  // order) would prove these bindings affine again.
  for (std::string& name : affine) NoteFact(ScheduleFact::AffineBinding(std::move(name)));

  LoopRV out = NewLoopRV(fused);
  std::vector<InstArg> inputs;
  for (LoopRV l : loop_rvs) inputs.push_back(InstArg::Of(l.ref()));
  Record(instruction_kinds::Fuse().name, std::move(inputs),
         nlohmann::json::array({preserve_unit_iters ? 1 : 0}), {out.ref()});
  return out;
}

namespace instruction_kinds {

const InstructionKind& Fuse() {
  static const InstructionKind k = kind_definition::DefineKind(
      "Fuse", {},
      [](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        if (a.size() == 0) a.Fail("expected at least one loop");
        a.ExpectAttrs(1);
        std::vector<LoopRV> loops;
        for (size_t i = 0; i < a.size(); ++i) loops.push_back(a.Loop(i));
        return {sch.Fuse(loops, a.AttrBool(0)).ref()};
      },
      [](kind_definition::PyCall& py) {
        for (const auto& s : py.in) py.Positional(s);
        py.Arg("preserve_unit_iters", kind_definition::PyBool(py.AttrBool(0)));
      });
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
