#include "search/evolutionary_search.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "database/record.h"
#include "ir/schedule/random_engine.h"
#include "search/apply_trace.h"
#include "search/measured_set.h"
#include "search/space_generator.h"
#include "search/structural_neighbors.h"
#include "support/parallel_for.h"
#include "support/split_mix.h"

namespace kiln::search {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Stages of a round, so that no two parallel slots of a round share a seed.
constexpr int64_t kStageSample = 0;        // + the sampling attempt
constexpr int64_t kStageEvolve = 1 << 20;  // + the genetic iteration
constexpr int64_t kStagePick = 1 << 21;

std::vector<ir::Trace> Sketches(const TuneContext& ctx) {
  if (!ctx.space_generator) {
    throw std::invalid_argument("EvolutionarySearch: the context has no space generator");
  }
  std::vector<ir::Trace> out;
  for (ir::Schedule& s : ctx.space_generator->Generate(ctx)) out.push_back(s.trace());
  return out;
}

void Validate(const EvolutionarySearchConfig& c) {
  auto fail = [](const std::string& what) {
    throw std::invalid_argument("EvolutionarySearch: " + what);
  };
  if (c.population_size < 1) fail("population_size must be at least 1");
  if (!(c.init_measured_ratio >= 0 && c.init_measured_ratio <= 1)) {
    fail("init_measured_ratio must be in [0, 1]");
  }
  if (c.init_min_unmeasured < 0) fail("init_min_unmeasured must be >= 0");
  if (c.max_fail_count < 1) fail("max_fail_count must be at least 1");
  if (c.genetic_num_iters < 0) fail("genetic_num_iters must be >= 0");
  if (!(c.genetic_mutate_prob >= 0 && c.genetic_mutate_prob <= 1)) {
    fail("genetic_mutate_prob must be in [0, 1]");
  }
  if (c.genetic_max_fail_count < 0) fail("genetic_max_fail_count must be >= 0");
  if (!(c.eps_greedy >= 0 && c.eps_greedy <= 1)) fail("eps_greedy must be in [0, 1]");
  if (!(c.prior_eps_greedy >= 0 && c.prior_eps_greedy <= 1)) {
    fail("prior_eps_greedy must be in [0, 1]");
  }
  if (!(c.neighbor_share >= 0 && c.neighbor_share <= 1)) fail("neighbor_share must be in [0, 1]");
  if (c.neighbor_incumbents < 0) fail("neighbor_incumbents must be >= 0");
  if (c.max_empty_rounds < 1) fail("max_empty_rounds must be at least 1");
  for (const WeightedMutator& m : c.mutators) {
    if (!m.mutator) fail("a mutator is null");
    if (!(m.probability >= 0)) fail("mutator " + m.mutator->Name() + " has a negative probability");
  }
}

}  // namespace

int64_t EvolutionarySearch::SlotSeed(int64_t seed, int64_t round, int64_t stage, int64_t index) {
  // SplitMix64 over the coordinates: nearby slots get unrelated streams.
  const auto mix = support::SplitMix64;
  uint64_t h = mix(static_cast<uint64_t>(seed) ^ 0x65766f6c7574696fULL);  // "evolutio"
  h = mix(h ^ static_cast<uint64_t>(round));
  h = mix(h ^ static_cast<uint64_t>(stage));
  h = mix(h ^ static_cast<uint64_t>(index));
  return static_cast<int64_t>(h % static_cast<uint64_t>(ir::RandomEngine::kModulus - 1)) + 1;
}

EvolutionarySearch::EvolutionarySearch(TuneContext ctx, EvolutionarySearchConfig config)
    : EvolutionarySearch(ctx, Sketches(ctx), std::move(config)) {}

EvolutionarySearch::EvolutionarySearch(TuneContext ctx, std::vector<ir::Trace> design_spaces,
                                       EvolutionarySearchConfig config)
    : ctx_(std::move(ctx)), config_(std::move(config)) {
  Validate(config_);
  if (design_spaces.empty()) {
    throw std::invalid_argument("EvolutionarySearch: the design space is empty");
  }
  for (const ir::Trace& t : design_spaces) {
    spaces_.push_back(t.Simplified(/*remove_postproc=*/true).WithoutDecisions());
  }
  if (config_.mutators.empty()) config_.mutators = DefaultLLVMMutators();
  double total = 0;
  for (const WeightedMutator& m : config_.mutators) {
    m.mutator->Initialize(ctx_);
    total += m.probability;
  }
  // P(no mutation) = 1 - p; P(mutator i) = p * w_i / sum(w) (TVM's sampler).
  mutator_probs_.push_back(total > 0 ? 1 - config_.genetic_mutate_prob : 1);
  for (const WeightedMutator& m : config_.mutators) {
    mutator_probs_.push_back(total > 0 ? config_.genetic_mutate_prob * m.probability / total : 0);
  }
}

void EvolutionarySearch::PreTuning(const TuningState& state) {
  if (state.db == nullptr) throw std::invalid_argument("EvolutionarySearch needs a database");
  if (state.cost_model == nullptr) {
    throw std::invalid_argument(
        "EvolutionarySearch needs a cost model (use the random model to search without one)");
  }
  state_ = state;
  pre_tuned_ = true;
}

std::vector<Candidate> EvolutionarySearch::PickBestFromDatabase(int n) {
  if (n <= 0) return {};
  std::vector<database::TuningRecord> top = state_.db->TopK(state_.workload_id, state_.target, n);
  std::vector<std::string> hashes;
  std::vector<size_t> unreplayed;
  for (size_t i = 0; i < top.size(); ++i) {
    hashes.push_back(top[i].trace_hash.empty() ? MeasuredSet::TraceHashOf(top[i].trace_json)
                                               : top[i].trace_hash);
    if (db_cache_.count(hashes.back())) continue;
    if (auto it = last_batch_.find(hashes.back()); it != last_batch_.end()) {
      db_cache_[hashes.back()] = std::move(it->second);
      last_batch_.erase(it);
      continue;
    }
    unreplayed.push_back(i);
  }
  std::vector<std::optional<Candidate>> replayed(unreplayed.size());
  std::vector<FailureStats> fails(unreplayed.size());
  support::ParallelFor(static_cast<int>(unreplayed.size()), ctx_.num_threads, [&](int j) {
    const database::TuningRecord& r = top[unreplayed[j]];
    try {
      ir::Trace t = ir::Trace::FromJSONString(r.trace_json);
      // With every decision recorded the replay draws nothing: any seed will do.
      replayed[j] = ApplyTraceWithPostprocs(ctx_, t, /*seed=*/1, &fails[j]);
    } catch (const std::exception& e) {
      fails[j].Add("replay", e.what());
    }
  });
  for (size_t j = 0; j < unreplayed.size(); ++j) {
    failures_.Merge(fails[j]);
    db_cache_[hashes[unreplayed[j]]] = std::move(replayed[j]);
  }
  std::vector<Candidate> out;
  for (const std::string& h : hashes) {
    if (const std::optional<Candidate>& c = db_cache_.at(h)) out.push_back(*c);
  }
  return out;
}

std::vector<Candidate> EvolutionarySearch::SampleInitPopulation(int64_t round, int n) {
  std::vector<Candidate> out;
  if (n <= 0) return out;
  int fail_rounds = 0;
  for (int64_t attempt = 0; static_cast<int>(out.size()) < std::max(1, config_.init_min_unmeasured) &&
                            fail_rounds < config_.max_fail_count;
       ++attempt) {
    std::vector<std::optional<Candidate>> results(n);
    std::vector<FailureStats> fails(n);
    support::ParallelFor(n, ctx_.num_threads, [&](int i) {
      ir::RandomEngine rng(SlotSeed(ctx_.seed, round, kStageSample + attempt, i));
      const int ds = static_cast<int>(rng.SampleInt(0, static_cast<int64_t>(spaces_.size())));
      results[i] = ApplyTraceWithPostprocs(ctx_, spaces_[ds], rng.ForkSeed(), &fails[i]);
      if (results[i]) results[i]->design_space = ds;
    });
    bool found = false;
    for (int i = 0; i < n; ++i) {
      failures_.Merge(fails[i]);
      if (results[i]) {
        found = true;
        out.push_back(std::move(*results[i]));
      }
    }
    if (!found) ++fail_rounds;
  }
  if (static_cast<int>(out.size()) < config_.init_min_unmeasured) {
    spdlog::warn("evolutionary search: only {} fresh sample(s) of the design space passed the "
                 "postprocessors ({} wanted; failures: {})",
                 out.size(), config_.init_min_unmeasured, failures_.Summary());
  }
  return out;
}

std::vector<double> EvolutionarySearch::Scores(const std::vector<CandidatePtr>& population) {
  const auto t0 = Clock::now();
  std::vector<ir::PrimFunc> unknown;
  std::vector<uint64_t> unknown_keys;
  std::unordered_set<uint64_t> asked;
  for (const CandidatePtr& c : population) {
    if (score_cache_.count(c->key) || !asked.insert(c->key).second) continue;
    unknown.push_back(c->scheduled);
    unknown_keys.push_back(c->key);
  }
  if (!unknown.empty()) {
    std::vector<double> s = state_.cost_model->Predict(unknown);
    if (s.size() != unknown.size()) {
      throw std::runtime_error("cost model '" + state_.cost_model->Name() + "' returned " +
                               std::to_string(s.size()) + " scores for " +
                               std::to_string(unknown.size()) + " programs");
    }
    for (size_t i = 0; i < s.size(); ++i) {
      // Clamped at 0 as TVM does; a NaN is no evidence of anything.
      score_cache_[unknown_keys[i]] = std::isfinite(s[i]) ? std::max(0.0, s[i]) : 0.0;
    }
  }
  std::vector<double> out;
  out.reserve(population.size());
  for (const CandidatePtr& c : population) out.push_back(score_cache_.at(c->key));
  stats_.secs_predict += Since(t0);
  return out;
}

EvolutionarySearch::CandidatePtr EvolutionarySearch::ReplayCached(const ir::Trace& trace,
                                                                  int64_t seed, int design_space,
                                                                  FailureStats* failures) {
  // A mutated trace carries every decision, so its replay draws nothing and
  // the outcome (candidate or rejection) is the same whichever slot, thread
  // or seed computes it first: caching it changes no result.
  auto in_space = [design_space](CandidatePtr c) -> CandidatePtr {
    if (!c || c->design_space == design_space) return c;
    auto copy = std::make_shared<Candidate>(*c);  // the same trace from another sketch
    copy->design_space = design_space;
    return copy;
  };
  std::string key = trace.IdentityKey();
  {
    std::lock_guard<std::mutex> lock(replay_cache_mu_);
    auto it = replay_cache_.find(key);
    if (it != replay_cache_.end()) {
      if (!it->second.candidate) failures->Add(it->second.fail_kind, it->second.fail_message);
      return in_space(it->second.candidate);
    }
  }
  FailureStats mine;
  ReplayOutcome outcome;
  if (std::optional<Candidate> c = ApplyTraceWithPostprocs(ctx_, trace, seed, &mine)) {
    c->design_space = design_space;
    outcome.candidate = std::make_shared<const Candidate>(std::move(*c));
  } else if (!mine.counts.empty()) {
    outcome.fail_kind = mine.counts.begin()->first;
    auto ex = mine.example.find(outcome.fail_kind);
    if (ex != mine.example.end()) outcome.fail_message = ex->second;
  }
  failures->Merge(mine);
  std::lock_guard<std::mutex> lock(replay_cache_mu_);
  return in_space(
      replay_cache_.emplace(std::move(key), std::move(outcome)).first->second.candidate);
}

std::vector<Candidate> EvolutionarySearch::Evolve(int64_t round, std::vector<Candidate> initial,
                                                  int k, const std::unordered_set<uint64_t>& exists_in) {
  std::unordered_set<uint64_t> exists = exists_in;
  std::vector<CandidatePtr> population;
  population.reserve(initial.size());
  for (Candidate& c : initial) population.push_back(std::make_shared<const Candidate>(std::move(c)));
  struct Scored {
    double score;
    int64_t order;  // first come first: ties stay in a fixed order
    CandidatePtr c;
  };
  std::vector<Scored> pool;
  int64_t order = 0;
  const int pop_size = config_.population_size;
  for (int iter = 0;; ++iter) {
    const std::vector<double> scores = Scores(population);
    for (size_t i = 0; i < population.size(); ++i) {
      if (!exists.insert(population[i]->key).second) continue;
      pool.push_back({scores[i], order++, population[i]});
    }
    if (iter >= config_.genetic_num_iters || population.empty()) break;

    // Breed the next population. Slot i draws from its own RNG; a draw of
    // "no mutation" claims its parent, and claims are granted in slot order
    // (a parent enters unchanged at most once); a slot that loses its claim
    // continues with its next try.
    const auto t0 = Clock::now();
    double total = 0;
    for (double s : scores) total += s;
    const std::vector<double> weights =
        total > 0 ? scores : std::vector<double>(population.size(), 1.0);
    struct Slot {
      ir::RandomEngine rng;
      int tries_left = 0;
      int last_parent = -1;
      int claim = -1;
      bool done = false;
      CandidatePtr result;
      FailureStats fails;
      int mutations_tried = 0, mutations_ok = 0;
    };
    std::vector<Slot> slots(pop_size);
    for (int i = 0; i < pop_size; ++i) {
      slots[i].rng.Seed(SlotSeed(ctx_.seed, round, kStageEvolve + iter, i));
      slots[i].tries_left = config_.genetic_max_fail_count + 1;
    }
    std::vector<char> kept(population.size(), 0);
    std::vector<int> pending(pop_size);
    for (int i = 0; i < pop_size; ++i) pending[i] = i;
    while (!pending.empty()) {
      support::ParallelFor(static_cast<int>(pending.size()), ctx_.num_threads, [&](int j) {
        Slot& s = slots[pending[j]];
        while (s.tries_left > 0) {
          --s.tries_left;
          s.last_parent = static_cast<int>(s.rng.SampleCategorical(weights));
          const int64_t m = s.rng.SampleCategorical(mutator_probs_);
          if (m == 0) {
            if (kept[s.last_parent]) continue;  // granted to an earlier slot already
            s.claim = s.last_parent;
            return;
          }
          ++s.mutations_tried;
          const Mutator& mutator = *config_.mutators[m - 1].mutator;
          std::string why;
          std::optional<ir::Trace> t;
          try {
            t = mutator.Apply(population[s.last_parent]->trace, s.rng, &why);
          } catch (const std::exception& e) {
            why = e.what();
          }
          if (!t) {
            s.fails.Add("nothing to mutate: " + mutator.Name(), why);
            continue;
          }
          const int64_t seed = s.rng.ForkSeed();  // drawn whether or not the cache answers
          CandidatePtr c =
              ReplayCached(*t, seed, population[s.last_parent]->design_space, &s.fails);
          if (c) {
            ++s.mutations_ok;
            s.result = std::move(c);
            s.done = true;
            return;
          }
        }
        // Every try failed: the last parent carries over (TVM does the same).
        s.result = population[s.last_parent];
        s.done = true;
      });
      std::vector<int> still;
      for (int i : pending) {
        Slot& s = slots[i];
        if (s.done) continue;
        if (s.claim >= 0 && !kept[s.claim]) {
          kept[s.claim] = 1;
          s.result = population[s.claim];
          s.done = true;
          continue;
        }
        s.claim = -1;
        if (s.tries_left == 0) {
          s.result = population[s.last_parent];
          s.done = true;
          continue;
        }
        still.push_back(i);
      }
      pending = std::move(still);
    }
    std::vector<CandidatePtr> next;
    next.reserve(pop_size);
    for (Slot& s : slots) {
      failures_.Merge(s.fails);
      stats_.mutations_tried += s.mutations_tried;
      stats_.mutations_ok += s.mutations_ok;
      next.push_back(std::move(s.result));
    }
    population = std::move(next);
    stats_.secs_evolve += Since(t0);
  }
  stats_.pool = static_cast<int>(pool.size());
  std::sort(pool.begin(), pool.end(), [](const Scored& a, const Scored& b) {
    return a.score != b.score ? a.score > b.score : a.order < b.order;
  });
  std::vector<Candidate> best;
  for (size_t i = 0; i < pool.size() && static_cast<int>(best.size()) < k; ++i) {
    best.push_back(*pool[i].c);
  }
  return best;
}

std::vector<Candidate> EvolutionarySearch::IncumbentNeighbors(
    const std::vector<Candidate>& incumbents, int n, const std::unordered_set<uint64_t>& exists) {
  std::vector<Candidate> out;
  const size_t m = std::min(incumbents.size(), static_cast<size_t>(config_.neighbor_incumbents));
  std::unordered_set<uint64_t> keep, taken;
  for (size_t i = 0; i < m; ++i) keep.insert(incumbents[i].key);
  std::erase_if(neighbor_cache_, [&](const auto& e) { return !keep.count(e.first); });
  for (size_t i = 0; i < m && static_cast<int>(out.size()) < n; ++i) {
    const Candidate& inc = incumbents[i];
    auto it = neighbor_cache_.find(inc.key);
    if (it == neighbor_cache_.end()) {
      const std::vector<ir::Trace> traces = StructuralNeighbors(ctx_.workload, inc.trace);
      std::vector<CandidatePtr> replayed(traces.size());
      std::vector<FailureStats> fails(traces.size());
      support::ParallelFor(static_cast<int>(traces.size()), ctx_.num_threads, [&](int j) {
        // Every decision is recorded: the replay draws nothing, any seed will do.
        replayed[j] = ReplayCached(traces[j], /*seed=*/1, inc.design_space, &fails[j]);
      });
      for (const FailureStats& f : fails) failures_.Merge(f);
      it = neighbor_cache_.emplace(inc.key, std::move(replayed)).first;
    }
    for (const CandidatePtr& c : it->second) {
      if (static_cast<int>(out.size()) >= n) break;
      if (!c || exists.count(c->key) || !taken.insert(c->key).second) continue;
      out.push_back(*c);
    }
  }
  return out;
}

std::vector<Candidate> EvolutionarySearch::Round(int64_t round, int k) {
  stats_ = {};
  score_cache_.clear();
  replay_cache_.clear();  // bounded by one round's mutants
  const auto t_start = Clock::now();

  auto t0 = Clock::now();
  const int n_measured = static_cast<int>(config_.population_size * config_.init_measured_ratio);
  std::vector<Candidate> measured = PickBestFromDatabase(n_measured);
  stats_.from_database = static_cast<int>(measured.size());
  stats_.secs_database = Since(t0);

  t0 = Clock::now();
  std::vector<Candidate> unmeasured =
      SampleInitPopulation(round, config_.population_size - static_cast<int>(measured.size()));
  stats_.sampled = static_cast<int>(unmeasured.size());
  stats_.secs_sampling = Since(t0);
  if (unmeasured.empty() && measured.empty()) return {};

  std::unordered_set<uint64_t> exists = returned_;
  if (state_.measured != nullptr) exists.insert(state_.measured->keys().begin(), state_.measured->keys().end());

  // A model that has learned nothing (TVM's XGBoost model before its
  // warm-up, whose predictions are noise) would steer the evolution at
  // random and narrow it around whatever it happened to prefer: until it
  // learns, every pick is a fresh random sample (TVM evolves on the noise).
  // Where the fresh samples cannot fill the batch (a space whose draws the
  // postprocs mostly reject), the evolution still runs, so that mutants of
  // the few valid schedules fill it as before.
  const bool informative = state_.cost_model->informative();
  stats_.model_informative = informative;
  std::unordered_set<uint64_t> fresh;
  for (const Candidate& c : unmeasured) {
    if (!exists.count(c.key)) fresh.insert(c.key);
  }
  std::vector<Candidate> bests;
  if (informative || static_cast<int>(fresh.size()) < k) {
    std::vector<Candidate> population = measured;
    population.insert(population.end(), unmeasured.begin(), unmeasured.end());
    bests = Evolve(round, std::move(population), k, exists);
  }

  // ε-greedy: each slot is exploration with probability ε, and those slots
  // prefer, a share of them structural neighbours of the best measured
  // schedules, the rest random fresh samples; the other slots prefer the
  // best scores. Each kind falls back on the others. Unlike TVM, a pick that
  // turns out measured does not use up its slot, and each slot explores
  // with probability ε: TVM takes floor(k ε) slots, none at all in a batch
  // of 16 with ε 0.05, so that small batches never explored. Until the
  // model has learned, every slot explores.
  ir::RandomEngine rng(SlotSeed(ctx_.seed, round, kStagePick, 0));
  int num_explore = 0;
  // A model that knows only its prior explores more (prior_eps_greedy).
  const bool prior_only = state_.cost_model->prior_only();
  stats_.model_prior_only = prior_only;
  const double eps = prior_only ? config_.prior_eps_greedy : config_.eps_greedy;
  for (int i = 0; i < k; ++i) num_explore += rng.SampleUniform() < eps ? 1 : 0;
  const int num_bests = informative ? k - num_explore : 0;
  const int want_neighbors = static_cast<int>(std::ceil(num_explore * config_.neighbor_share));
  // Twice as many as wanted: one may also be among the best scores. No more:
  // each incumbent asked replays all its neighbours.
  std::vector<Candidate> neighbors = want_neighbors > 0
                                         ? IncumbentNeighbors(measured, 2 * want_neighbors, exists)
                                         : std::vector<Candidate>{};
  const std::vector<int64_t> rands = rng.SampleWithoutReplacement(
      static_cast<int64_t>(unmeasured.size()), static_cast<int64_t>(unmeasured.size()));
  std::vector<Candidate> out;
  size_t ib = 0, in = 0, ir = 0;
  enum class Pick { kBest, kNeighbor, kRandom };
  // Takes the next unmeasured candidate of one kind; false when it has none left.
  auto take = [&](Pick kind) {
    while (true) {
      const Candidate* c = nullptr;
      if (kind == Pick::kBest && ib < bests.size()) {
        c = &bests[ib++];
      } else if (kind == Pick::kNeighbor && in < neighbors.size()) {
        c = &neighbors[in++];
      } else if (kind == Pick::kRandom && ir < rands.size()) {
        c = &unmeasured[rands[ir++]];
      } else {
        return false;
      }
      if (!exists.insert(c->key).second) continue;  // measured, or picked already
      out.push_back(*c);
      ++(kind == Pick::kBest       ? stats_.picked_best
         : kind == Pick::kNeighbor ? stats_.picked_neighbor
                                   : stats_.picked_random);
      return true;
    }
  };
  while (static_cast<int>(out.size()) < num_bests && take(Pick::kBest)) {
  }
  while (stats_.picked_neighbor < want_neighbors && static_cast<int>(out.size()) < k &&
         take(Pick::kNeighbor)) {
  }
  for (Pick kind : {Pick::kRandom, Pick::kBest, Pick::kNeighbor}) {
    while (static_cast<int>(out.size()) < k && take(kind)) {
    }
  }
  last_batch_.clear();
  for (Candidate& c : out) {
    c.trace_json = c.trace.AsJSONString();
    returned_.insert(c.key);
    Candidate& replayed = last_batch_[MeasuredSet::TraceHashOf(c.trace_json)] = c;
    replayed.design_space = -1;  // as a replay of the record says
    replayed.trace_json.clear();
  }
  stats_.secs_total = Since(t_start);
  spdlog::info(
      "evolutionary search: round {}: {} from the database, {} sampled, {} distinct unmeasured "
      "scored, mutations {}/{} ok; picked {} best + {} neighbours + {} random{}; {:.3f} s "
      "(sampling {:.3f}, evolving {:.3f}, predicting {:.3f})",
      round, stats_.from_database, stats_.sampled, stats_.pool, stats_.mutations_ok,
      stats_.mutations_tried, stats_.picked_best, stats_.picked_neighbor, stats_.picked_random,
      !informative ? " (the cost model has not learned yet: random picks first)"
      : prior_only ? " (the cost model knows only its prior: more random picks)"
                   : "",
      stats_.secs_total, stats_.secs_sampling, stats_.secs_evolve, stats_.secs_predict);
  return out;
}

std::vector<Candidate> EvolutionarySearch::GenerateCandidates(int k) {
  if (!pre_tuned_) throw std::logic_error("EvolutionarySearch: PreTuning was not called");
  if (k < 1) return {};
  for (int empty = 0; empty < config_.max_empty_rounds; ++empty) {
    std::vector<Candidate> out = Round(round_++, k);
    if (!out.empty()) {
      exhausted_ = false;
      return out;
    }
  }
  exhausted_ = true;
  return {};
}

}  // namespace kiln::search
