#include "rpc/farm/job_runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>

#include "cost_model/xgb_model.h"
#include "database/database.h"
#include "ir/flops.h"
#include "ir/structural_hash.h"
#include "ir/target.h"
#include "ir/text/parser.h"
#include "rpc/farm/farm_runner.h"
#include "rpc/proto_convert.h"
#include "search/measured_samples.h"
#include "search/prior_model.h"
#include "search/tune.h"
#include "search/tune_context.h"

namespace kiln::rpc::farm {

const char* JobStateName(v1::JobState s) {
  switch (s) {
    case v1::JOB_STATE_QUEUED: return "queued";
    case v1::JOB_STATE_RUNNING: return "running";
    case v1::JOB_STATE_DONE: return "done";
    case v1::JOB_STATE_FAILED: return "failed";
    case v1::JOB_STATE_CANCELLED: return "cancelled";
    default: return "unknown";
  }
}

v1::JobState ParseJobState(const std::string& name) {
  for (v1::JobState s : {v1::JOB_STATE_QUEUED, v1::JOB_STATE_RUNNING, v1::JOB_STATE_DONE,
                         v1::JOB_STATE_FAILED, v1::JOB_STATE_CANCELLED}) {
    if (name == JobStateName(s)) return s;
  }
  return v1::JOB_STATE_UNSPECIFIED;
}

void JobHandle::Publish(const v1::JobEvent& e) {
  std::lock_guard<std::mutex> lock(mu_);
  ++version_;
  if (e.has_progress() && !events_.empty() && events_.back().second.has_progress() &&
      !events_.back().second.done()) {
    events_.back() = {version_, e};
  } else {
    events_.emplace_back(version_, e);
    if (events_.size() > kMaxKeptEvents) events_.pop_front();
  }
  cv_.notify_all();
}

bool JobHandle::NextEvent(int64_t* version, v1::JobEvent* out, int wait_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, std::chrono::milliseconds(wait_ms), [&] { return version_ > *version; })) {
    return false;
  }
  for (const auto& [v, e] : events_) {
    if (v <= *version) continue;
    *version = v;
    *out = e;
    return true;
  }
  return false;  // unreachable: the newest event is always kept
}

bool JobHandle::finished() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !events_.empty() && events_.back().second.done();
}

std::vector<int64_t> SplitTrials(const v1::TuningJob& job) {
  const int n = job.workloads_size();
  std::vector<double> w(n);
  for (int i = 0; i < n; ++i) w[i] = job.workloads(i).weight() > 0 ? job.workloads(i).weight() : 1;
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  // Largest remainders: each gets the floor of its share (at least one),
  // then the trials left go to the largest fractions, in workload order on ties.
  std::vector<int64_t> out(n);
  std::vector<double> frac(n);
  for (int i = 0; i < n; ++i) {
    const double share = static_cast<double>(job.trials()) * w[i] / total;
    out[i] = std::max<int64_t>(1, static_cast<int64_t>(std::floor(share)));
    frac[i] = share - std::floor(share);
  }
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return frac[a] > frac[b]; });
  int64_t left = job.trials() - std::accumulate(out.begin(), out.end(), int64_t{0});
  for (int k = 0; left > 0; k = (k + 1) % n, --left) ++out[order[k]];
  // The minimum of one may overshoot: take back from the largest.
  while (left < 0) {
    auto big = std::max_element(out.begin(), out.end());
    if (*big <= 1) break;
    --*big;
    ++left;
  }
  return out;
}

namespace {

// Fills a JobEvent's progress from the Tune loop's, offset by the workloads
// already done.
v1::JobEvent ProgressEvent(int64_t job_id, const search::TuneProgress& p, int64_t done_before,
                           int64_t target_total, const std::string& workload) {
  v1::JobEvent e;
  e.set_job_id(job_id);
  e.set_state(v1::JOB_STATE_RUNNING);
  v1::JobProgress* g = e.mutable_progress();
  g->set_trials_done(done_before + p.trials_done);
  g->set_trials_target(target_total);
  g->set_best_gflops(p.best_gflops);
  g->set_best_seconds(p.best_secs);
  for (const auto& [k, v] : p.errors_by_kind) (*g->mutable_errors_by_kind())[k] = v;
  g->set_eta_seconds(p.eta_secs);
  g->set_workload(workload);
  return e;
}

}  // namespace

void RunJob(JobHandle& job, const JobRunContext& ctx) {
  const v1::TuningJob& spec = job.spec();
  v1::JobEvent last;
  last.set_job_id(job.id());
  int64_t ok_measurements = 0;
  int64_t busy_measurements = 0;
  auto finish = [&](v1::JobState state, const std::string& message, database::Database* db) {
    last.set_state(state);
    last.set_ok_measurements(ok_measurements);
    last.set_busy_measurements(busy_measurements);
    last.set_message(message);
    last.set_done(true);
    if (db) {
      try {
        db->UpdateJob(job.id(), JobStateName(state), message);
      } catch (const std::exception& e) {
        spdlog::error("job {}: cannot record its end: {}", job.id(), e.what());
      }
    }
    job.Publish(last);
    spdlog::info("job {}: {} ({})", job.id(), JobStateName(state), message);
  };
  std::optional<database::Database> db;
  try {
    db.emplace(database::Database::Open(ctx.db_path));
    db->SetCommitPrincipal(ctx.principal);
    const ir::Target target = ir::Target::Parse(spec.target().spec());
    const std::string target_str = target.ToString();
    std::optional<database::JobRow> row = db->Job(job.id());
    if (!row) throw std::runtime_error("job " + std::to_string(job.id()) + " is not in the database");
    db->UpdateJob(job.id(), JobStateName(v1::JOB_STATE_RUNNING), "");
    last.set_state(v1::JOB_STATE_RUNNING);
    last.set_message("waiting for a worker serving '" + target_str + "'");
    job.Publish(last);

    std::string pool = row->pool;
    if (pool.empty()) {
      std::optional<std::string> found = ctx.dispatcher->WaitForPool(target_str, &job.stop);
      if (!found) {
        if (job.cancelled.load()) finish(v1::JOB_STATE_CANCELLED, "cancelled before it started", &*db);
        return;  // shutting down: stays running, resumed on restart
      }
      pool = *found;
      db->SetJobPool(job.id(), pool);
    }
    const std::string fingerprint = pool.substr(pool.find(" | ") + 3);

    const std::vector<int64_t> trials = SplitTrials(spec);
    const int64_t trials_total = std::accumulate(trials.begin(), trials.end(), int64_t{0});
    int64_t done_before = 0;
    std::map<std::string, int64_t> errors;
    const search::TimingConfig timing = FromProto(spec.timing());
    // The learned search, the default as in `kiln tune`: one XGBoost model
    // for the job's workloads, which learns before the first batch from every
    // record the farm's database holds for the target (the earlier jobs' too,
    // so each job starts from what the farm measured before: docs/
    // ARCHITECTURE.md §8 on what that does for C2D:0) and from each batch
    // after it.
    const bool evolutionary = spec.strategy().name() != "replay";
    std::unique_ptr<cost_model::XGBModel> model;
    if (evolutionary) {
      cost_model::XGBModelConfig config;
      config.nthread = std::max(1, ctx.search_threads);
      model = std::make_unique<cost_model::XGBModel>(config);
      const search::AutoPrior prior = search::ChooseAutoPrior(ctx.prior_model_files, target);
      if (!prior.path.empty()) {
        model->SetPrior(
            std::make_shared<cost_model::XGBModel>(cost_model::XGBModel::Load(prior.path, config)));
        spdlog::info("job {}: the xgb model starts from {}: {}", job.id(), prior.path,
                     prior.reason);
      } else if (!ctx.prior_model_files.empty()) {
        spdlog::info("job {}: the xgb model starts from nothing: {}", job.id(), prior.reason);
      }
      search::MeasuredFeatures stored = search::LoadMeasuredFeatures(
          *db, target_str, config.nthread, std::nullopt, config.features);
      if (!stored.samples.empty()) model->UpdateFeatures(stored.samples);
      spdlog::info(
          "job {}: the xgb model learned from {} stored record(s) of '{}' ({}; {} do not "
          "replay)",
          job.id(), stored.samples.size(), target_str,
          model->trained() ? "trained" : "too few to train", stored.unreplayable);
      // `kiln submit` shows it as the job's state: "running: the xgb model ...".
      const std::string from = prior.path.empty() ? "" : ", starting from " + prior.path;
      last.set_message("the xgb model learned from " + std::to_string(stored.samples.size()) +
                       " record(s) of the target in the farm's database" + from +
                       (model->trained() || !prior.path.empty()
                            ? ""
                            : " (too few to train: random picks first)"));
      job.Publish(last);
    }
    for (int i = 0; i < spec.workloads_size(); ++i) {
      const v1::JobWorkload& jw = spec.workloads(i);
      const std::string name = jw.workload().name().empty() ? jw.spec() : jw.workload().name();
      ir::PrimFunc func = ir::ParseFunc(jw.workload().text(), name);
      if (!jw.workload().structural_hash().empty() &&
          jw.workload().structural_hash() != ir::StructuralHashHex(func)) {
        throw std::runtime_error("workload " + name + ": its text hashes to " + ir::StructuralHashHex(func) +
                                 ", not the " + jw.workload().structural_hash() + " the job names");
      }
      search::TuneContext tctx = search::MakeDefaultTuneContext(func, target, static_cast<int64_t>(spec.seed()),
                                                                ctx.search_threads);
      tctx.task_name = name;
      FarmRunner runner(*ctx.dispatcher, job.id(), spec.priority(), pool);
      search::MeasureTask task{func, target, timing, spec.seed()};
      search::TuneOptions opts;
      opts.trials = trials[i];
      opts.trials_per_iter = spec.strategy().trials_per_iter() > 0 ? spec.strategy().trials_per_iter() : 16;
      if (evolutionary) {
        opts.strategy = search::StrategyKind::kEvolutionary;
        opts.trials_per_iter_start = 16;  // kiln tune's (tools/tune_cli.h)
        opts.cost_model = model.get();
        opts.seed_model_from_database = false;  // it learned from the whole database above
      }
      opts.seed = spec.seed();
      opts.fingerprint = fingerprint;
      opts.job_id = std::to_string(job.id());  // `kiln report --job ID` picks the job's records
      opts.stop = &job.stop;
      const double flops = ir::EstimateFlops(func);
      opts.on_progress = [&](const search::TuneProgress& p) {
        if (auto returned = runner.TakeReturnTime(); returned && ctx.metrics) {
          ctx.metrics->ObserveCommit(
              std::chrono::duration<double>(std::chrono::steady_clock::now() - *returned).count());
        }
        v1::JobEvent e = ProgressEvent(job.id(), p, done_before, trials_total, name);
        if (auto wid = db->FindWorkload(func)) {
          if (auto best = db->Best(*wid, target_str)) {
            v1::BestSoFar* b = e.mutable_best();
            b->set_workload_hash(best->workload_hash);
            b->set_trace_hash(best->trace_hash);
            b->set_median_seconds(best->median_seconds);
            b->set_gflops(best->median_seconds > 0 ? flops / best->median_seconds / 1e9 : 0);
          }
        }
        for (const auto& [k, v] : errors) (*e.mutable_progress()->mutable_errors_by_kind())[k] += v;
        last = e;
        job.Publish(e);
      };
      search::TuneSummary s = search::Tune(tctx, runner, *db, task, opts);
      for (const auto& [k, v] : s.errors_by_kind) errors[k] += v;
      done_before += s.records_total;
      ok_measurements += s.ok_measurements;
      busy_measurements += s.busy_measurements;
      if (job.cancelled.load()) {
        finish(v1::JOB_STATE_CANCELLED, "cancelled", &*db);
        return;
      }
      if (ctx.shutting_down && ctx.shutting_down->load()) return;  // resumed on restart
      if (s.infrastructure_failed) {
        finish(v1::JOB_STATE_FAILED, name + ": " + s.stop_reason, &*db);
        return;
      }
    }
    if (model && model->prior() != nullptr) {
      // Whether the run's own held-out records kept the prior
      // (cost_model::XGBModelConfig::check_prior).
      spdlog::info("job {}: the xgb model's prior was {} at the end", job.id(),
                   model->uses_prior() ? "kept" : "set aside");
    }
    finish(v1::JOB_STATE_DONE,
           std::to_string(done_before) + " records for " + std::to_string(spec.workloads_size()) + " workload(s)",
           &*db);
  } catch (const std::exception& e) {
    if (ctx.shutting_down && ctx.shutting_down->load()) return;
    finish(v1::JOB_STATE_FAILED, e.what(), db ? &*db : nullptr);
  }
}

}  // namespace kiln::rpc::farm
