// The registry of instruction kinds: every kind a trace may name.
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/schedule/instruction.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/tensorize.h"

namespace kiln::ir {

const std::vector<const InstructionKind*>& AllInstructionKinds() {
  static const std::vector<const InstructionKind*> kinds = {
      &instruction_kinds::GetBlock(),
      &instruction_kinds::GetLoops(),
      &instruction_kinds::GetChildBlocks(),
      &instruction_kinds::GetProducers(),
      &instruction_kinds::GetConsumers(),
      &instruction_kinds::SampleCategorical(),
      &instruction_kinds::SamplePerfectTile(),
      &instruction_kinds::EnterPostproc(),
      &instruction_kinds::Split(),
      &instruction_kinds::Fuse(),
      &instruction_kinds::Reorder(),
      &instruction_kinds::AddUnitLoop(),
      &instruction_kinds::Parallel(),
      &instruction_kinds::Vectorize(),
      &instruction_kinds::Bind(),
      &instruction_kinds::Unroll(),
      &instruction_kinds::Annotate(),
      &instruction_kinds::Unannotate(),
      &instruction_kinds::SetScope(),
      &instruction_kinds::StorageAlign(),
      &instruction_kinds::CacheRead(),
      &instruction_kinds::CacheWrite(),
      &instruction_kinds::ComputeAt(),
      &instruction_kinds::ReverseComputeAt(),
      &instruction_kinds::SampleComputeLocation(),
      &instruction_kinds::ComputeInline(),
      &instruction_kinds::ReverseComputeInline(),
      &instruction_kinds::DecomposeReduction(),
      &instruction_kinds::RFactor(),
      &instruction_kinds::Blockize(),
      &instruction_kinds::Tensorize(),
      &instruction_kinds::TransformLayout(),
  };
  return kinds;
}

const InstructionKind* FindInstructionKind(const std::string& name) {
  // Every replayed instruction looks its kind up: hashed once, not a scan
  // of string compares.
  static const auto* const by_name = [] {
    auto* m = new std::unordered_map<std::string_view, const InstructionKind*>();
    for (const InstructionKind* k : AllInstructionKinds()) m->emplace(k->name, k);
    // TVM renamed GetBlock to GetSBlock; traces written by either replay here.
    m->emplace("GetSBlock", &instruction_kinds::GetBlock());
    return m;
  }();
  auto it = by_name->find(name);
  return it == by_name->end() ? nullptr : it->second;
}

}  // namespace kiln::ir
