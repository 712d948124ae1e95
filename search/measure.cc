#include "search/measure.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "database/record.h"
#include "ir/error.h"
#include "ir/expr.h"

namespace kiln::search {

std::vector<ArgInfo> ArgInfoOf(const ir::PrimFunc& func) {
  std::vector<ArgInfo> infos;
  infos.reserve(func.params.size());
  for (size_t i = 0; i < func.params.size(); ++i) {
    const ir::Buffer& b = func.params[i];
    ArgInfo info{b.dtype(), {}};
    for (size_t d = 0; d < b.ndim(); ++d) {
      const auto* imm = b.shape()[d].as<ir::IntImmNode>();
      if (imm == nullptr) {
        throw ir::IRError("function '" + func.name + "': parameter " + std::to_string(i) + " (" +
                          b.name() + ") has a non-constant extent in dimension " +
                          std::to_string(d));
      }
      info.shape.push_back(imm->value);
    }
    infos.push_back(std::move(info));
  }
  return infos;
}

namespace {
struct StatusName {
  MeasureStatus status;
  const char* name;
};
constexpr StatusName kStatusNames[] = {
    {MeasureStatus::kOk, "ok"},
    {MeasureStatus::kBuildError, "build_error"},
    {MeasureStatus::kRunCrash, "run_crash"},
    {MeasureStatus::kTimeout, "timeout"},
    {MeasureStatus::kWrongResult, "wrong_result"},
    {MeasureStatus::kInfraError, "infra_error"},
};
}  // namespace

const char* MeasureStatusName(MeasureStatus s) {
  for (const auto& e : kStatusNames) {
    if (e.status == s) return e.name;
  }
  return "invalid_status";
}

MeasureStatus ParseMeasureStatus(const std::string& name) {
  for (const auto& e : kStatusNames) {
    if (name == e.name) return e.status;
  }
  throw std::invalid_argument("unknown measure status '" + name +
                              "' (expected ok, build_error, run_crash, timeout, wrong_result or "
                              "infra_error)");
}

bool IsWideSpread(const std::vector<double>& run_secs) {
  if (run_secs.size() < 2) return false;
  const auto [lo, hi] = std::minmax_element(run_secs.begin(), run_secs.end());
  const double median = database::Median(run_secs);
  return median > 0 && (*hi - *lo) / median > kWideSpreadFraction;
}

double MeasureResult::MedianSecs() const {
  if (status != MeasureStatus::kOk || run_secs.empty()) {
    return std::numeric_limits<double>::infinity();
  }
  return database::Median(run_secs);
}

}  // namespace kiln::search
