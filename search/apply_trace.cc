#include "search/apply_trace.h"

#include "ir/schedule/schedule.h"
#include "ir/structural_hash.h"
#include "search/postproc.h"

namespace kiln::search {

std::optional<Candidate> ApplyTraceWithPostprocs(const TuneContext& ctx, const ir::Trace& trace,
                                                 int64_t seed, FailureStats* failures) {
  ir::Schedule sch(ctx.workload, seed);
  try {
    trace.ApplyToSchedule(&sch, /*remove_postproc=*/true);
  } catch (const std::exception& e) {
    failures->Add("replay", e.what());
    return std::nullopt;
  }
  sch.EnterPostproc();
  for (const PostprocPtr& p : ctx.postprocs) {
    std::string why;
    bool passed = false;
    try {
      passed = p->Apply(&sch, &why);
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (!passed) {
      failures->Add(p->Name(), why);
      return std::nullopt;
    }
  }
  Candidate c;
  c.scheduled = sch.func();
  c.trace = std::move(sch).TakeTrace();
  c.key = ir::StructuralHash(c.scheduled);
  return c;
}

}  // namespace kiln::search
