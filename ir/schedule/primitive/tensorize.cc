// tensorize: declare that a block computes exactly what a registered tensor
// intrinsic computes (tensor_intrin.h), so that the backend emits the
// intrinsic for it. Given a loop, the loops under it are blockized first, as
// TVM's tensorize does (the trace then holds a Blockize instruction and a
// Tensorize of the block it made).
//
// The block must match the intrinsic's description structurally
// (tensor_intrin_match.h); otherwise a ScheduleError names the block, the
// intrinsic and what differs, and the schedule is left as it was. A
// matched block keeps its body, which computes what the description does,
// so the interpreter runs it unchanged; it is annotated "kiln.tensor_intrin"
// with the intrinsic's name, and the lowering pass LowerTensorIntrin
// (ir/transform/lower_tensor_intrin.cc) replaces it with the implementation.
// Unlike TVM, which replaces the body at once, Kiln defers that to
// lowering, so every later primitive and analysis sees ordinary loads and
// stores.
#include <nlohmann/json.hpp>

#include "ir/op.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/schedule_mutator.h"
#include "ir/tensor_intrin/tensor_intrin.h"
#include "ir/tensor_intrin/tensor_intrin_match.h"
#include "ir/schedule/tensorize.h"

namespace kiln::ir {

namespace {

constexpr const char* kPrim = "tensorize";

}  // namespace

void Tensorize(Schedule& sch, BlockOrLoop target, const std::string& intrin_name,
               bool preserve_unit_iters) {
  const TensorIntrin* intrin = FindTensorIntrin(intrin_name);
  if (intrin == nullptr) {
    std::string names;
    for (const std::string& n : TensorIntrinNames()) names += (names.empty() ? "" : ", ") + n;
    throw ScheduleError(kPrim, "unknown tensor intrinsic \"" + intrin_name + "\" (registered: " +
                                   names + ")");
  }
  auto refuse = [&](const BlockRealizeNode& realize) {
    std::string why;
    if (MatchTensorIntrin(realize, *intrin, &why)) return;
    throw ScheduleError(kPrim, "block '" + realize.block->name + "' does not match tensor intrinsic " +
                                   intrin_name + ": " + why);
  };
  BlockRV block;
  if (const auto* loop = std::get_if<LoopRV>(&target)) {
    // Try on a copy first, so that a refusal leaves no blockize behind.
    Schedule probe = sch;
    BlockRV b = probe.Blockize(*loop, preserve_unit_iters);
    refuse(*probe.PathOf(b).back().as<BlockRealizeNode>());
    block = sch.Blockize(*loop, preserve_unit_iters);
  } else {
    block = std::get<BlockRV>(target);
    refuse(*sch.PathOf(block).back().as<BlockRealizeNode>());
  }
  StmtPath path = sch.PathOf(block);
  BlockNode n = *path.back().as<BlockRealizeNode>()->block.get();
  n.annotations[kTensorIntrinAttr] = StringImm(intrin_name);
  ScheduleMutator mut(sch);
  mut.SetBodyKeepingFacts(ReplaceBlockAlongPath(path, MakeBlock(std::move(n))));
  mut.Record(instruction_kinds::Tensorize().name, {InstArg::Of(block.ref())},
             nlohmann::json::array({intrin_name, preserve_unit_iters ? 1 : 0}), {});
}

namespace instruction_kinds {

const InstructionKind& Tensorize() {
  static const InstructionKind k = kind_definition::DefineKind(
      "Tensorize", {},
      [](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(1);
        a.ExpectAttrs(2);
        ::kiln::ir::Tensorize(sch, a.BlockOrLoopArg(0), a.AttrStr(0), a.AttrBool(1));
        return {};
      },
      [](kind_definition::PyCall& py) {
        py.Arg("block_or_loop", py.in[0])
            .Arg("tensor_intrin", py.attrs[0].dump())
            .Arg("preserve_unit_iters", kind_definition::PyBool(py.AttrBool(1)));
      });
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
