// TuneContext: everything one tuning task needs to know about itself — the
// workload, the target, how its design space is generated and which
// postprocessors vet a candidate, and the seed and thread count that make its
// search reproducible (TVM's TuneContext, docs/ARCHITECTURE.md §11).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/prim_func.h"
#include "ir/target.h"

namespace kiln::search {

class SpaceGenerator;
class Postproc;

struct TuneContext {
  ir::PrimFunc workload;  // unscheduled
  ir::Target target;
  std::shared_ptr<SpaceGenerator> space_generator;
  std::vector<std::shared_ptr<Postproc>> postprocs;
  int64_t seed = 1;
  int num_threads = 1;  // threads for candidate sampling; results never depend on it
  std::string task_name = "main";

  // The cores the tuned kernel will run on: the target's -num-cores, or, when
  // the target leaves it open, this machine's hardware concurrency (rules size
  // their parallel annotations by it, as TVM does).
  int NumCores() const;
};

// A context for `workload` on `target` with the default space ("post-order
// apply" with the target's rule set) and the target's default postprocs.
// Throws std::invalid_argument for a target without a rule set (CUDA, for now).
TuneContext MakeDefaultTuneContext(ir::PrimFunc workload, ir::Target target, int64_t seed = 1,
                                   int num_threads = 1);

}  // namespace kiln::search
