// add_unit_loop: wraps a block or a loop in a new loop of extent 1 (named
// "u", as TVM names it), e.g. so that a loop-less block has a loop to bind.
#include <string>

#include "ir/op.h"
#include "ir/schedule/define_kind.h"
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
  Record(instruction_kinds::AddUnitLoop().name, {Arg(target)}, nlohmann::json::array(),
         {out.ref()});
  return out;
}

namespace instruction_kinds {

const InstructionKind& AddUnitLoop() {
  static const InstructionKind k = kind_definition::DefineKind(
      "AddUnitLoop", {},
      [](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(1);
        a.ExpectAttrs(0);
        return {sch.AddUnitLoop(a.BlockOrLoopArg(0)).ref()};
      },
      [](kind_definition::PyCall& py) { py.Arg("block_or_loop", py.in[0]); });
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
