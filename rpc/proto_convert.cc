#include "rpc/proto_convert.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace kiln::rpc {

v1::MeasureStatus ToProto(search::MeasureStatus s) {
  switch (s) {
    case search::MeasureStatus::kOk: return v1::MEASURE_STATUS_OK;
    case search::MeasureStatus::kBuildError: return v1::MEASURE_STATUS_BUILD_ERROR;
    case search::MeasureStatus::kRunCrash: return v1::MEASURE_STATUS_RUN_CRASH;
    case search::MeasureStatus::kTimeout: return v1::MEASURE_STATUS_TIMEOUT;
    case search::MeasureStatus::kWrongResult: return v1::MEASURE_STATUS_WRONG_RESULT;
    case search::MeasureStatus::kInfraError: return v1::MEASURE_STATUS_INFRA_ERROR;
  }
  return v1::MEASURE_STATUS_UNSPECIFIED;
}

search::MeasureStatus FromProto(v1::MeasureStatus s) {
  switch (s) {
    case v1::MEASURE_STATUS_OK: return search::MeasureStatus::kOk;
    case v1::MEASURE_STATUS_BUILD_ERROR: return search::MeasureStatus::kBuildError;
    case v1::MEASURE_STATUS_RUN_CRASH: return search::MeasureStatus::kRunCrash;
    case v1::MEASURE_STATUS_TIMEOUT: return search::MeasureStatus::kTimeout;
    case v1::MEASURE_STATUS_WRONG_RESULT: return search::MeasureStatus::kWrongResult;
    case v1::MEASURE_STATUS_INFRA_ERROR: return search::MeasureStatus::kInfraError;
    default: break;
  }
  throw std::invalid_argument("unknown status " + std::to_string(static_cast<int>(s)));
}

v1::TimingConfig ToProto(const search::TimingConfig& t) {
  v1::TimingConfig p;
  p.set_number(t.number);
  p.set_repeat(t.repeat);
  p.set_min_repeat_ms(t.min_repeat_ms);
  p.set_flush_cache(t.flush_cache);
  p.set_timeout_s(t.timeout_s);
  return p;
}

search::TimingConfig FromProto(const v1::TimingConfig& p) {
  search::TimingConfig t;
  if (p.number() != 0) t.number = p.number();
  if (p.repeat() != 0) t.repeat = p.repeat();
  if (p.min_repeat_ms() != 0) t.min_repeat_ms = p.min_repeat_ms();
  t.flush_cache = p.flush_cache();
  if (p.timeout_s() != 0) t.timeout_s = p.timeout_s();
  if (t.number < 1 || t.number > (1 << 30)) {
    throw std::invalid_argument("timing.number " + std::to_string(t.number) + " (1 to 2^30)");
  }
  if (t.repeat < 1 || t.repeat > (1 << 20)) {
    throw std::invalid_argument("timing.repeat " + std::to_string(t.repeat) + " (1 to 2^20)");
  }
  if (!std::isfinite(t.min_repeat_ms) || t.min_repeat_ms < 0 || t.min_repeat_ms > 1e7) {
    throw std::invalid_argument("timing.min_repeat_ms " + std::to_string(t.min_repeat_ms));
  }
  if (!std::isfinite(t.timeout_s) || t.timeout_s <= 0 || t.timeout_s > 1e6) {
    throw std::invalid_argument("timing.timeout_s " + std::to_string(t.timeout_s));
  }
  return t;
}

v1::MeasureResult ToProto(const search::MeasureResult& r) {
  v1::MeasureResult p;
  p.set_status(ToProto(r.status));
  for (double s : r.run_secs) p.add_run_seconds(s);
  p.set_verified(r.verified);
  p.set_build_seconds(r.build_secs);
  p.set_message(r.message);
  if (r.machine_load >= 0) p.set_machine_load(r.machine_load);
  p.set_wide_spread(r.wide_spread);
  return p;
}

search::MeasureResult FromProto(const v1::MeasureResult& p) {
  search::MeasureResult r;
  r.status = FromProto(p.status());
  if (p.run_seconds_size() > (1 << 20)) throw std::invalid_argument("too many run_seconds");
  for (double s : p.run_seconds()) {
    if (!std::isfinite(s) || s < 0) throw std::invalid_argument("run_seconds " + std::to_string(s));
    r.run_secs.push_back(s);
  }
  if (r.status == search::MeasureStatus::kOk && r.run_secs.empty()) {
    throw std::invalid_argument("status ok without run_seconds");
  }
  if (!std::isfinite(p.build_seconds()) || p.build_seconds() < 0) {
    throw std::invalid_argument("build_seconds " + std::to_string(p.build_seconds()));
  }
  r.verified = p.verified();
  r.build_secs = p.build_seconds();
  r.message = p.message();
  if (p.has_machine_load()) {
    if (!std::isfinite(p.machine_load()) || p.machine_load() < 0 || p.machine_load() > 1) {
      throw std::invalid_argument("machine_load " + std::to_string(p.machine_load()) + " (a share of the CPUs, 0..1)");
    }
    r.machine_load = p.machine_load();
  }
  // The repeats say it too: a sender that did not fill it in loses nothing.
  r.wide_spread = p.wide_spread() || search::IsWideSpread(r.run_secs);
  return r;
}

}  // namespace kiln::rpc
