// ReplayTrace: the simplest search strategy (TVM's ReplayTrace, docs/ARCHITECTURE.md §7).
// A candidate is a design-space trace, chosen uniformly, replayed without its
// decisions (every sample drawn afresh), then vetted by the postprocessors;
// a slot that fails retries up to max_fail_count times.
//
// Determinism (docs/ARCHITECTURE.md, data flow): slot i of sampling round r
// draws from an RNG seeded from (task seed, r, i) alone, and slots are merged
// in index order, so the candidates do not depend on the thread count.
// Candidates are deduplicated by the structural hash of the scheduled
// program, against the ones this strategy returned before and the keys the
// caller says are measured.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/prim_func.h"
#include "ir/schedule/trace.h"
#include "search/candidate.h"
#include "search/failure_stats.h"
#include "search/search_strategy.h"
#include "search/tune_context.h"

namespace kiln::search {

struct ReplayTraceConfig {
  int max_fail_count = 100;  // attempts per slot (TVM's default)
  // NextBatch gives up after this many rounds in a row that found nothing new.
  int max_empty_rounds = 5;
};

class ReplayTrace : public SearchStrategy {
 public:
  // Generates the design space from ctx.space_generator (Initialize is the
  // caller's: MakeDefaultTuneContext does it). Throws ScheduleError when the
  // space cannot be generated, std::invalid_argument when it is empty.
  explicit ReplayTrace(TuneContext ctx, ReplayTraceConfig config = {});
  // Samples from the given sketches instead.
  ReplayTrace(TuneContext ctx, std::vector<ir::Trace> design_spaces, ReplayTraceConfig config = {});

  // The sketches, simplified and without decisions.
  const std::vector<ir::Trace>& design_spaces() const { return spaces_; }

  // Up to k new candidates, in a deterministic order: none of them has a key
  // in `measured` or among the candidates returned before. Fewer (possibly
  // none) once max_empty_rounds rounds in a row found no key this strategy
  // had not met before (a key met in `measured` counts as met): the space is
  // exhausted, or the postprocs reject everything (see failures()).
  std::vector<Candidate> NextBatch(int k, const std::unordered_set<uint64_t>& measured = {});

  // SearchStrategy: the measured set comes from the tuning state; no cost
  // model is needed.
  std::string Name() const override { return "replay"; }
  void PreTuning(const TuningState& state) override { measured_ = state.measured; }
  std::vector<Candidate> GenerateCandidates(int k) override;
  bool exhausted() const override { return exhausted_; }

  const FailureStats& failures() const override { return failures_; }
  int64_t rounds() const override { return round_; }
  const TuneContext& context() const { return ctx_; }

  // The seed of slot `index` in round `round`.
  static int64_t SlotSeed(int64_t seed, int64_t round, int64_t index);

 private:
  struct SlotResult {
    std::optional<Candidate> candidate;
    FailureStats failures;
  };
  SlotResult SampleSlot(int64_t round, int64_t index) const;

  TuneContext ctx_;
  ReplayTraceConfig config_;
  std::vector<ir::Trace> spaces_;
  std::unordered_set<uint64_t> seen_;
  FailureStats failures_;
  int64_t round_ = 0;
  const MeasuredSet* measured_ = nullptr;
  bool exhausted_ = false;
};

}  // namespace kiln::search
