// Turning a trace into a measurable candidate: replay it on a fresh schedule
// of the workload (without its postproc instructions), then run the
// context's postprocessors, as every strategy does for every candidate
// (TVM's ThreadedTraceApply, docs/ARCHITECTURE.md §7).
#pragma once

#include <cstdint>
#include <optional>

#include "ir/schedule/trace.h"
#include "search/candidate.h"
#include "search/failure_stats.h"
#include "search/tune_context.h"

namespace kiln::search {

// nullopt when the replay throws ("replay" in *failures) or a postprocessor
// rejects the result (its name). The schedule's RNG (for sampling
// instructions without decisions) is seeded with `seed`. The candidate's
// trace_json is left empty (serializing costs; callers fill it for the
// candidates they keep).
std::optional<Candidate> ApplyTraceWithPostprocs(const TuneContext& ctx, const ir::Trace& trace,
                                                 int64_t seed, FailureStats* failures);

}  // namespace kiln::search
