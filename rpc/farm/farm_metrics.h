// The coordinator's metrics in the Prometheus text exposition format
// (version 0.0.4), served at http://ADDR/metrics (rpc/farm/metrics_server.h).
// Counters are kept here; gauges are read from the dispatcher's state
// (Dispatcher::Status) when scraped. Names start with kiln_farm_. No label
// ever holds a token: principals appear by name only.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "kiln/v1/farm.pb.h"

namespace kiln::rpc::farm {

class FarmMetrics {
 public:
  // A refused request, by reason: no_token, bad_token, role, not_owner,
  // foreign_lease, unknown_lease, invalid, too_large, simulated, too_many.
  void Refused(const std::string& reason);
  // A result a worker posted, by its measure status (ok, build_error, ...).
  void Result(const std::string& status);
  // Seconds from a batch's last result to its records committed.
  void ObserveCommit(double seconds);

  // Upper bounds of the commit-latency histogram's buckets, in seconds.
  static constexpr std::array<double, 12> kCommitBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                            0.05,   0.1,   0.25,   0.5,   1,     2.5};

  // The exposition text; `status` gives the gauges.
  std::string Render(const v1::FarmStatusResponse& status) const;

  int64_t refused(const std::string& reason) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, int64_t> refused_;
  std::map<std::string, int64_t> results_;
  std::array<int64_t, kCommitBuckets.size()> commit_buckets_{};
  int64_t commit_count_ = 0;
  double commit_sum_ = 0;
};

// A Prometheus label value with \, " and newlines escaped.
std::string EscapeLabel(const std::string& v);

}  // namespace kiln::rpc::farm
