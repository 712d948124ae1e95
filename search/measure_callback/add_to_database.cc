// AddToDatabase: every measured candidate becomes a tuning record as soon as
// its batch returns (the database is the source of truth: a killed run loses
// at most the batch in flight).
#include <ctime>

#include "search/measure_callback.h"

namespace kiln::search {
namespace {

class AddToDatabase : public MeasureCallback {
 public:
  explicit AddToDatabase(RecordTemplate t) : t_(std::move(t)) {}
  std::string Name() const override { return "AddToDatabase"; }

  void Apply(const TuningState& state, const std::vector<Candidate>& batch,
             const std::vector<MeasureResult>& results) override {
    for (size_t i = 0; i < batch.size() && i < results.size(); ++i) {
      const MeasureResult& r = results[i];
      if (r.status == MeasureStatus::kInfraError) continue;
      state.db->CommitRecord(state.workload_id, Record(state.target, batch[i], r));
      if (state.measured != nullptr) state.measured->Add(batch[i]);
    }
  }

 private:
  database::TuningRecord Record(const std::string& target, const Candidate& c,
                                const MeasureResult& r) const {
    database::TuningRecord rec;
    rec.workload_hash = t_.workload_hash;
    rec.target = target;
    rec.fingerprint = t_.fingerprint;
    rec.trace_json = c.trace_json;
    rec.status = MeasureStatusName(r.status);
    rec.message = r.message;
    rec.verified = r.verified;
    rec.machine_load = r.machine_load;
    rec.wide_spread = r.wide_spread;
    // Only an ok result has meaningful times (the runner leaves the rest empty).
    if (r.status == MeasureStatus::kOk) rec.run_seconds = r.run_secs;
    rec.args = t_.args;
    rec.provenance.host = t_.host;
    rec.provenance.kiln_version = t_.kiln_version;
    rec.provenance.seed = t_.seed;
    rec.provenance.job_id = t_.job_id;
    rec.provenance.timestamp = static_cast<int64_t>(std::time(nullptr));
    return rec;
  }

  RecordTemplate t_;
};

}  // namespace

MeasureCallbackPtr MakeAddToDatabase(RecordTemplate record) {
  return std::make_unique<AddToDatabase>(std::move(record));
}

}  // namespace kiln::search
