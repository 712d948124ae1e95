// add_unit_loop: wraps a block or a loop in a new loop of extent 1 (named
// "u", as TVM names it), e.g. so that a loop-less block has a loop to bind.
#include <string>

#include "ir/op.h"
#include "ir/schedule/inst_args.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/schedule.h"

namespace kiln::ir {

LoopRV Schedule::AddUnitLoop(BlockOrLoop target) {
  StmtPath path;
  DataType dtype = DataType::Int32();
  if (const auto* b = std::get_if<BlockRV>(&target)) {
    path = PathOf(*b);
    if (path.size() == 1) {
      throw ScheduleError("add_unit_loop", "block " + NameOf(*b) +
                                               " is the root block of the function; a loop "
                                               "cannot enclose it");
    }
  } else {
    LoopRV l = std::get<LoopRV>(target);
    path = PathOf(l);
    dtype = Get(l).loop_var.dtype();
  }
  Var u("u", dtype);
  SetBody(ReplaceAlongPath(
      path, For(u, IntImm(0, dtype), IntImm(1, dtype), ForKind::kSerial, path.back())));
  LoopRV out = NewLoopRV(u);
  Record("AddUnitLoop", {Arg(target)}, nlohmann::json::array(), {out.ref()});
  return out;
}

namespace kinds {

const InstructionKind& AddUnitLoop() {
  static const InstructionKind k{
      "AddUnitLoop",
      /*is_pure=*/false,
      /*has_decision=*/false,
      [](Schedule& sch, const std::vector<InstArg>& in, const nlohmann::json& attrs,
         const nlohmann::json*) -> std::vector<RVRef> {
        const std::string kind = "AddUnitLoop";
        inst::ExpectInputs(kind, in, 1);
        inst::ExpectAttrs(kind, attrs, 0);
        return {sch.AddUnitLoop(inst::BlockOrLoopArg(kind, in, 0)).ref()};
      },
      [](const std::vector<std::string>& in, const std::vector<std::string>& out,
         const nlohmann::json&, const nlohmann::json*) {
        return inst::PyAssign(out) + "sch.add_unit_loop(block_or_loop=" + in[0] + ")";
      },
      nullptr};
  return k;
}

}  // namespace kinds
}  // namespace kiln::ir
