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
      &kinds::GetBlock(),
      &kinds::GetLoops(),
      &kinds::GetChildBlocks(),
      &kinds::GetProducers(),
      &kinds::GetConsumers(),
      &kinds::SampleCategorical(),
      &kinds::SamplePerfectTile(),
      &kinds::EnterPostproc(),
      &kinds::Split(),
      &kinds::Fuse(),
      &kinds::Reorder(),
      &kinds::AddUnitLoop(),
      &kinds::Parallel(),
      &kinds::Vectorize(),
      &kinds::Bind(),
      &kinds::Unroll(),
      &kinds::Annotate(),
      &kinds::Unannotate(),
      &kinds::SetScope(),
      &kinds::StorageAlign(),
      &kinds::CacheRead(),
      &kinds::CacheWrite(),
      &kinds::ComputeAt(),
      &kinds::ReverseComputeAt(),
      &kinds::SampleComputeLocation(),
      &kinds::ComputeInline(),
      &kinds::ReverseComputeInline(),
      &kinds::DecomposeReduction(),
      &kinds::RFactor(),
      &kinds::Blockize(),
      &kinds::Tensorize(),
      &kinds::TransformLayout(),
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
    m->emplace("GetSBlock", &kinds::GetBlock());
    return m;
  }();
  auto it = by_name->find(name);
  return it == by_name->end() ? nullptr : it->second;
}

}  // namespace kiln::ir
