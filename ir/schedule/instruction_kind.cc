// The registry of instruction kinds: every kind a trace may name.
#include <string>
#include <vector>

#include "ir/schedule/instruction.h"
#include "ir/schedule/primitive/kinds.h"

namespace kiln::ir {

const std::vector<const InstructionKind*>& AllInstructionKinds() {
  static const std::vector<const InstructionKind*> kinds = {
      &kinds::GetBlock(),          &kinds::GetLoops(),          &kinds::GetChildBlocks(),
      &kinds::GetProducers(),      &kinds::GetConsumers(),      &kinds::SampleCategorical(),
      &kinds::SamplePerfectTile(), &kinds::EnterPostproc(),
      &kinds::ComputeInline(),     &kinds::ReverseComputeInline(),
  };
  return kinds;
}

const InstructionKind* FindInstructionKind(const std::string& name) {
  // TVM renamed GetBlock to GetSBlock; traces written by either replay here.
  const std::string& canonical = name == "GetSBlock" ? std::string("GetBlock") : name;
  for (const InstructionKind* k : AllInstructionKinds()) {
    if (k->name == canonical) return k;
  }
  return nullptr;
}

}  // namespace kiln::ir
