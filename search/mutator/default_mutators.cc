// The mutator mixture per target (TVM's Mutator::DefaultLLVM, docs/ARCHITECTURE.md §6).
#include "search/mutator.h"

namespace kiln::search {

std::vector<WeightedMutator> DefaultLLVMMutators() {
  return {{MakeMutateTileSize(), 0.9},
          {MakeMutateComputeLocation(), 0.05},
          {MakeMutateUnroll(), 0.03},
          {MakeMutateParallel(16), 0.02}};
}

}  // namespace kiln::search
