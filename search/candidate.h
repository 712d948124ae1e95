// A schedule the search proposes for measurement, with what identifies it.
#pragma once

#include <cstdint>
#include <string>

#include "ir/prim_func.h"
#include "ir/schedule/trace.h"

namespace kiln::search {

// One schedule ready to measure.
struct Candidate {
  ir::PrimFunc scheduled;
  ir::Trace trace;         // the full trace, postproc instructions included
  std::string trace_json;  // trace.AsJSONString()
  uint64_t key = 0;        // StructuralHash(scheduled): the dedup key
  int design_space = -1;   // index of the sketch it was sampled from (-1: not sampled)
};

}  // namespace kiln::search
