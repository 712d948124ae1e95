// Resolving a workload spec from the command line: "GMM", "GMM:3", a suite
// family at shapes of one's own ("C2D(1,56,56,64,256,1,1,0)", as the model
// slices in configs/jobs/ use), or a path.
#pragma once

#include <string>

#include "ir/prim_func.h"

namespace kiln::tools {

struct ResolvedWorkload {
  ir::PrimFunc func;
  std::string label;  // "GMM:3", "C2D(1,56,56,64,256,1,1,0)" or the file path
};

// A suite name (index 0), NAME:IDX, NAME(p0, p1, ...) with the family's
// parameters (ir::MakeWorkloadWithParams), or a path to a text file ("-" is
// stdin).
// Throws std::runtime_error (or ParseError) with a message naming the spec.
ResolvedWorkload ResolveWorkload(const std::string& spec);

// `func` scheduled by a trace (JSON text), replayed with its decisions.
// Throws ir::ScheduleError / std::runtime_error when it does not apply.
ir::PrimFunc ApplyTraceJson(const ir::PrimFunc& func, const std::string& trace_json);

// Reads a whole file ("-" reads stdin); throws with the path on failure.
std::string ReadTextFile(const std::string& path);

}  // namespace kiln::tools
