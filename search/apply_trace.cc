#include "search/apply_trace.h"

#include <exception>
#include <vector>

#include "ir/schedule/schedule.h"
#include "ir/structural_equal.h"
#include "ir/structural_hash.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "search/postproc.h"

namespace kiln::search {
namespace {

// This thread's own copy of `workload` (fresh nodes, structurally equal).
// Every replay starts from the workload and copies the paths it rewrites,
// so with one shared workload the search's threads keep touching the same
// nodes' reference counts (its buffers, loop variables, constants), and the
// cache lines holding them bounce between the cores: on C2D:0 the search
// cost about 5% more CPU that way (search_overhead_bench, the same
// candidates).
// The copy is the text form parsed back, kept only if it compares equal; a
// few workloads are kept per thread, each entry holding its source so that
// the source's address cannot be reused by another workload meanwhile.
const ir::PrimFunc& ThreadCopy(const ir::PrimFunc& workload) {
  struct Entry {
    ir::PrimFunc source, copy;
  };
  thread_local std::vector<Entry> kept;
  auto same = [&](const ir::PrimFunc& f) {
    if (f.body.get() != workload.body.get() || f.params.size() != workload.params.size()) {
      return false;
    }
    for (size_t i = 0; i < f.params.size(); ++i) {
      if (f.params[i].get() != workload.params[i].get()) return false;
    }
    return true;
  };
  for (const Entry& e : kept) {
    if (same(e.source)) return e.copy;
  }
  ir::PrimFunc copy = workload;
  try {
    ir::PrimFunc parsed = ir::ParseFunc(ir::ToText(workload));
    if (ir::StructuralEqual(parsed, workload)) copy = std::move(parsed);
  } catch (const std::exception&) {
    // Not expressible as text: replay from the shared workload.
  }
  constexpr size_t kMaxKept = 4;
  if (kept.size() == kMaxKept) kept.erase(kept.begin());
  kept.push_back({workload, std::move(copy)});
  return kept.back().copy;
}

}  // namespace

std::optional<Candidate> ApplyTraceWithPostprocs(const TuneContext& ctx, const ir::Trace& trace,
                                                 int64_t seed, FailureStats* failures) {
  ir::Schedule sch(ThreadCopy(ctx.workload), seed);
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
