#include "database/record.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <xxhash.h>

#include "ir/structural_hash.h"

namespace kiln::database {

bool IsKnownStatus(const std::string& status) {
  for (const char* s : {kStatusOk, kStatusBuildError, kStatusRunCrash, kStatusTimeout,
                        kStatusWrongResult, kStatusInfraError}) {
    if (status == s) return true;
  }
  return false;
}

std::string CanonicalTraceJson(const std::string& trace_json) {
  // nlohmann's object keys are ordered, so dump() is a canonical form.
  nlohmann::json j = nlohmann::json::parse(trace_json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw std::runtime_error("trace_json: not valid JSON");
  return j.dump();
}

std::string TraceHash(const std::string& canonical_trace_json) {
  return ir::StructuralHashHex(XXH64(canonical_trace_json.data(), canonical_trace_json.size(), 0));
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace kiln::database
