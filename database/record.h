// A tuning record: one measured (or failed) schedule of one workload on one
// target, with everything needed to trust, reproduce and explain it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace kiln::database {

// Status strings are independent of the search that produced the record, so
// any tool can read them. Only kOk records with verified == true (and not
// stale) are ever returned as a tuned result.
inline constexpr const char* kStatusOk = "ok";
inline constexpr const char* kStatusBuildError = "build_error";
inline constexpr const char* kStatusRunCrash = "run_crash";
inline constexpr const char* kStatusTimeout = "timeout";
inline constexpr const char* kStatusWrongResult = "wrong_result";
inline constexpr const char* kStatusInfraError = "infra_error";
bool IsKnownStatus(const std::string& status);

// The argument a kernel was measured with: dtype and shape.
struct ArgInfo {
  std::string dtype;
  std::vector<int64_t> shape;
  friend bool operator==(const ArgInfo&, const ArgInfo&) = default;
};

// Where and how a record was produced.
struct Provenance {
  std::string host;          // machine or RPC worker name
  std::string kiln_version;  // "0.1.0"
  uint64_t seed = 0;
  std::string job_id;
  int64_t timestamp = 0;     // seconds since the Unix epoch
  // Where the record came from: "" for Kiln's own measurement, "tvm" for one
  // imported from a MetaSchedule database (database/tvm_import.h), with the
  // run seconds the source reported (run_seconds holds them too until a
  // re-measurement replaces them).
  std::string source;
  std::vector<double> source_run_seconds;
  friend bool operator==(const Provenance&, const Provenance&) = default;
};

struct TuningRecord {
  std::string workload_hash;  // ir::StructuralHashHex of the workload
  std::string target;         // normalized ir::Target string
  std::string fingerprint;    // the measuring machine: CPU model + features / GPU arch, toolchains
  std::string trace_json;     // the schedule's trace (canonicalized on commit)
  std::string trace_hash;     // xxhash64 hex of the canonical trace JSON; filled on commit
  std::vector<double> run_seconds;  // every repeat
  double median_seconds = 0;        // filled on commit from run_seconds
  std::string status = kStatusOk;
  std::string message;
  bool verified = false;
  // A re-measure did not reproduce the stored time (`kiln db verify
  // --mark-stale`): the record never counts as best.
  bool stale = false;
  // Noise figures of the measurement (search/measure.h): the share of CPU
  // time other processes used meanwhile (-1 unknown), and whether the repeats
  // spread wider than 10% of their median.
  double machine_load = -1;
  bool wide_spread = false;
  std::vector<ArgInfo> args;
  Provenance provenance;
  friend bool operator==(const TuningRecord&, const TuningRecord&) = default;
};

// The canonical form of a trace's JSON (sorted keys, no spaces) and its hash.
// Throws std::runtime_error when the text is not JSON.
std::string CanonicalTraceJson(const std::string& trace_json);
std::string TraceHash(const std::string& canonical_trace_json);
double Median(std::vector<double> values);  // 0 for an empty list

}  // namespace kiln::database
