// Mutators: trace -> trace edits the evolutionary search uses to make a
// schedule's neighbours (TVM's Mutator, docs/ARCHITECTURE.md §6). A mutator picks one
// decision (or, for MutateParallel, one annotation value) of a trace that
// carries decisions and returns a new trace truncated at EnterPostproc; the
// caller replays it and runs the postprocessors, which may still reject it.
// One mutator per file in search/mutator/.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/schedule/random_engine.h"
#include "ir/schedule/trace.h"

namespace kiln::search {

struct TuneContext;

class Mutator {
 public:
  virtual ~Mutator() = default;
  virtual std::string Name() const = 0;
  // Reads what the mutator needs from the task (workload, cores).
  virtual void Initialize(const TuneContext& /*ctx*/) {}
  // A mutated trace (without postproc instructions), or nullopt with *why
  // saying why nothing could be mutated. Thread-safe: every call draws only
  // from `rng`. `trace` must carry its decisions (a trace a schedule recorded).
  virtual std::optional<ir::Trace> Apply(const ir::Trace& trace, ir::RandomEngine& rng,
                                         std::string* why) const = 0;
};
using MutatorPtr = std::shared_ptr<Mutator>;

MutatorPtr MakeMutateTileSize();
MutatorPtr MakeMutateComputeLocation();
MutatorPtr MakeMutateUnroll();
// max_jobs_per_core as ParallelizeVectorizeUnroll's (TVM's CPU default: 16).
MutatorPtr MakeMutateParallel(int64_t max_jobs_per_core = 16);

struct WeightedMutator {
  MutatorPtr mutator;
  double probability;
};
// TVM's LLVM list: MutateTileSize 0.9, MutateComputeLocation 0.05,
// MutateUnroll 0.03, MutateParallel(16) 0.02. Not yet initialized.
std::vector<WeightedMutator> DefaultLLVMMutators();

}  // namespace kiln::search
