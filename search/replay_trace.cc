#include "search/replay_trace.h"

#include <algorithm>
#include <stdexcept>

#include "ir/schedule/random_engine.h"
#include "ir/schedule/schedule.h"
#include "ir/structural_hash.h"
#include "search/apply_trace.h"
#include "search/postproc.h"
#include "search/space_generator.h"
#include "support/parallel_for.h"
#include "support/split_mix.h"

namespace kiln::search {

namespace {

std::vector<ir::Trace> Sketches(const TuneContext& ctx) {
  if (!ctx.space_generator) throw std::invalid_argument("ReplayTrace: the context has no space generator");
  std::vector<ir::Trace> out;
  for (ir::Schedule& s : ctx.space_generator->Generate(ctx)) out.push_back(s.trace());
  return out;
}

}  // namespace

ReplayTrace::ReplayTrace(TuneContext ctx, ReplayTraceConfig config)
    : ReplayTrace(ctx, Sketches(ctx), config) {}

ReplayTrace::ReplayTrace(TuneContext ctx, std::vector<ir::Trace> design_spaces,
                         ReplayTraceConfig config)
    : ctx_(std::move(ctx)), config_(config) {
  if (design_spaces.empty()) throw std::invalid_argument("ReplayTrace: the design space is empty");
  if (config_.max_fail_count < 1) {
    throw std::invalid_argument("ReplayTrace: max_fail_count must be at least 1");
  }
  for (const ir::Trace& t : design_spaces) {
    spaces_.push_back(t.Simplified(/*remove_postproc=*/true).WithoutDecisions());
  }
}

int64_t ReplayTrace::SlotSeed(int64_t seed, int64_t round, int64_t index) {
  // SplitMix64 over the three coordinates: nearby slots get unrelated streams.
  const auto mix = support::SplitMix64;
  uint64_t h = mix(static_cast<uint64_t>(seed));
  h = mix(h ^ static_cast<uint64_t>(round));
  h = mix(h ^ static_cast<uint64_t>(index));
  return static_cast<int64_t>(h % static_cast<uint64_t>(ir::RandomEngine::kModulus - 1)) + 1;
}

ReplayTrace::SlotResult ReplayTrace::SampleSlot(int64_t round, int64_t index) const {
  SlotResult r;
  ir::RandomEngine rng(SlotSeed(ctx_.seed, round, index));
  const int64_t n = static_cast<int64_t>(spaces_.size());
  for (int attempt = 0; attempt < config_.max_fail_count; ++attempt) {
    const int ds = static_cast<int>(rng.SampleInt(0, n));
    std::optional<Candidate> c =
        ApplyTraceWithPostprocs(ctx_, spaces_[ds], rng.ForkSeed(), &r.failures);
    if (!c) continue;
    c->trace_json = c->trace.AsJSONString();
    c->design_space = ds;
    r.candidate = std::move(c);
    return r;
  }
  return r;
}

std::vector<Candidate> ReplayTrace::NextBatch(int k, const std::unordered_set<uint64_t>& measured) {
  std::vector<Candidate> out;
  int empty_rounds = 0;
  while (static_cast<int>(out.size()) < k && empty_rounds < config_.max_empty_rounds) {
    const int64_t round = round_++;
    const int slots = k - static_cast<int>(out.size());
    std::vector<SlotResult> results(slots);
    support::ParallelFor(slots, ctx_.num_threads,
                         [&](int i) { results[i] = SampleSlot(round, i); });
    int fresh = 0;
    for (SlotResult& r : results) {
      failures_.Merge(r.failures);
      if (!r.candidate) continue;
      const uint64_t key = r.candidate->key;
      // Meeting a measured key for the first time is progress too: a resumed
      // run walks through what it measured before without taking that for
      // an exhausted space.
      if (!seen_.insert(key).second) continue;
      ++fresh;
      if (measured.count(key)) continue;
      out.push_back(std::move(*r.candidate));
    }
    empty_rounds = fresh == 0 ? empty_rounds + 1 : 0;
  }
  return out;
}

std::vector<Candidate> ReplayTrace::GenerateCandidates(int k) {
  static const std::unordered_set<uint64_t> kNone;
  std::vector<Candidate> out = NextBatch(k, measured_ ? measured_->keys() : kNone);
  exhausted_ = static_cast<int>(out.size()) < k;
  return out;
}

}  // namespace kiln::search
