// EvolutionarySearch: the learned search (TVM's EvolutionarySearch,
// docs/ARCHITECTURE.md §7). Every batch:
//   1. the best measured schedules of the database (population × 0.2) are
//      replayed with their decisions, plus fresh samples of the design
//      space up to the population size;
//   2. for genetic_num_iters iterations the cost model scores the
//      population, every schedule not measured (nor returned before) enters
//      a size-limited pool of the best scores, and the next population is
//      bred: a parent drawn in proportion to its score, then, with
//      probability genetic_mutate_prob, a mutator drawn from the mixture
//      (search/mutator.h) — a mutated trace must replay and pass the
//      postprocessors — otherwise the parent itself, at most once per parent;
//   3. the batch takes the best of the pool and, with probability
//      eps_greedy per slot, exploration: a share of those slots goes to
//      structural neighbours of the best measured schedules
//      (search/structural_neighbors.h), the rest to random fresh samples.
//
// Unlike TVM: the measured set is seeded from the database (a resumed run
// never re-measures), and the whole batch is deterministic at any thread
// count: every parallel slot draws from an RNG seeded from (seed, round,
// stage, index) and results merge in index order; the "parent kept once"
// rule, which TVM resolves by a race, is resolved in slot order.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/schedule/trace.h"
#include "search/candidate.h"
#include "search/failure_stats.h"
#include "search/mutator.h"
#include "search/search_strategy.h"
#include "search/tune_context.h"

namespace kiln::search {

struct EvolutionarySearchConfig {
  int population_size = 512;
  double init_measured_ratio = 0.2;  // of the population, from the database's best
  int init_min_unmeasured = 50;      // fresh samples wanted before evolving
  int max_fail_count = 5;            // sampling rounds in a row that may yield nothing
  int genetic_num_iters = 4;
  double genetic_mutate_prob = 0.85;
  int genetic_max_fail_count = 10;   // extra tries per slot of the next population
  // Each slot of a batch is a random fresh sample with this probability.
  // TVM's is 0.05. Raised to 0.2 on measurements (docs/ARCHITECTURE.md §7):
  // the model's best picks sit in one basin of the space, and on C2D:0 the
  // better basins were found by the random picks.
  double eps_greedy = 0.2;
  // The same while the cost model knows only a prior (a model trained on
  // other workloads, `kiln tune --prior-model`) and none of this run's
  // records. Kiln's own: the prior may not fit the workload, and a first
  // batch of its picks alone can hold the whole run in its basin, where
  // half of them at random give the model's first training something to
  // compare (SFM:0 over 8 seeds: 25.8 µs from the prior at 0.2, 21.7 at
  // 0.5 with the prior's held-out check, 21.8 from nothing;
  // docs/ARCHITECTURE.md §8).
  double prior_eps_greedy = 0.5;
  // Of the eps_greedy slots, this share (rounded up) measures structural
  // neighbours of the best measured schedules (search/structural_neighbors.h:
  // one compute location or categorical draw changed, the tiles kept), the
  // rest random fresh samples. Kiln's own (docs/ARCHITECTURE.md §7): the
  // model cannot rank a structure it has only seen with poor tiles.
  double neighbor_share = 0.5;
  // How many of the best measured schedules lend their neighbours, best
  // first: the next one's when every neighbour of the best is measured.
  int neighbor_incumbents = 4;
  // GenerateCandidates gives up (exhausted) after this many rounds in a row
  // without a new candidate (TVM's num_empty_iters_before_early_stop).
  int max_empty_rounds = 5;
  // The mutators and their probabilities; empty: DefaultLLVMMutators().
  std::vector<WeightedMutator> mutators;
};

// What one GenerateCandidates round did, for logs and the overhead bench.
struct EvolutionRoundStats {
  int from_database = 0;   // measured schedules replayed into the population
  int sampled = 0;         // fresh samples
  int pool = 0;            // distinct unmeasured schedules scored
  int mutations_tried = 0;
  int mutations_ok = 0;    // replayed and passed the postprocs
  int picked_best = 0;
  int picked_random = 0;
  int picked_neighbor = 0;        // structural neighbours of the best measured
  bool model_informative = true;  // false: the model had not learned; random picks first
  bool model_prior_only = false;  // true: the model knew only its prior (prior_eps_greedy)
  double secs_database = 0, secs_sampling = 0, secs_evolve = 0, secs_predict = 0, secs_total = 0;
};

class EvolutionarySearch : public SearchStrategy {
 public:
  // Generates the design space from ctx.space_generator (initialized by the
  // caller, as MakeDefaultTuneContext does) and initializes the mutators.
  // Throws std::invalid_argument for a bad config or an empty space.
  explicit EvolutionarySearch(TuneContext ctx, EvolutionarySearchConfig config = {});
  EvolutionarySearch(TuneContext ctx, std::vector<ir::Trace> design_spaces,
                     EvolutionarySearchConfig config = {});

  std::string Name() const override { return "evolutionary"; }
  // Needs state.db and state.cost_model (std::invalid_argument otherwise).
  void PreTuning(const TuningState& state) override;
  std::vector<Candidate> GenerateCandidates(int k) override;
  bool exhausted() const override { return exhausted_; }
  const FailureStats& failures() const override { return failures_; }
  int64_t rounds() const override { return round_; }

  const std::vector<ir::Trace>& design_spaces() const { return spaces_; }
  const EvolutionarySearchConfig& config() const { return config_; }
  const EvolutionRoundStats& last_round() const { return stats_; }

  static int64_t SlotSeed(int64_t seed, int64_t round, int64_t stage, int64_t index);

 private:
  std::vector<Candidate> PickBestFromDatabase(int n);
  std::vector<Candidate> SampleInitPopulation(int64_t round, int n);
  // The best `k` unmeasured schedules met while evolving, best first.
  std::vector<Candidate> Evolve(int64_t round, std::vector<Candidate> population, int k,
                                const std::unordered_set<uint64_t>& exists);
  // Evolution passes candidates around by shared pointer: a generation
  // carries most of its parents over, the pool keeps every generation, and a
  // candidate's trace is costly to copy.
  using CandidatePtr = std::shared_ptr<const Candidate>;
  std::vector<double> Scores(const std::vector<CandidatePtr>& population);
  // ApplyTraceWithPostprocs for a mutated trace, through replay_cache_; the
  // candidate carries `design_space`. Null when the replay was rejected.
  CandidatePtr ReplayCached(const ir::Trace& trace, int64_t seed, int design_space,
                            FailureStats* failures);
  // Up to `n` unmeasured structural neighbours (not in `exists`) of the
  // best measured schedules `incumbents` (best first), in the order
  // StructuralNeighbors gives, the best schedule's first.
  std::vector<Candidate> IncumbentNeighbors(const std::vector<Candidate>& incumbents, int n,
                                            const std::unordered_set<uint64_t>& exists);
  std::vector<Candidate> Round(int64_t round, int k);

  TuneContext ctx_;
  EvolutionarySearchConfig config_;
  std::vector<ir::Trace> spaces_;
  std::vector<double> mutator_probs_;  // [no mutation, mutator 0, ...]
  TuningState state_;
  bool pre_tuned_ = false;
  // Keys returned by earlier rounds of this run (measured or in flight).
  std::unordered_set<uint64_t> returned_;
  // Database records replayed (by trace hash): replaying with decisions and
  // postprocs is deterministic, so each is done once per run.
  std::unordered_map<std::string, std::optional<Candidate>> db_cache_;
  // The last batch returned, by trace hash, as a replay of its record gives
  // it back: most records new to the database's best are these, and their
  // replay is known without doing it.
  std::unordered_map<std::string, Candidate> last_batch_;
  // Scores of this round, by program key (the model does not change within a round).
  std::unordered_map<uint64_t, double> score_cache_;
  // Mutated traces replayed this round (a popular parent gets the same
  // mutation more than once), rejections included.
  struct ReplayOutcome {
    CandidatePtr candidate;
    std::string fail_kind, fail_message;
  };
  std::mutex replay_cache_mu_;
  std::unordered_map<std::string, ReplayOutcome> replay_cache_;
  // The replayed structural neighbours of the current incumbents, by the
  // incumbent's program key (entries of schedules no longer among the
  // incumbents are dropped each round). Rejected neighbours are null.
  std::unordered_map<uint64_t, std::vector<CandidatePtr>> neighbor_cache_;
  FailureStats failures_;
  EvolutionRoundStats stats_;
  int64_t round_ = 0;
  bool exhausted_ = false;
};

}  // namespace kiln::search
