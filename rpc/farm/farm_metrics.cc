#include "rpc/farm/farm_metrics.h"

#include <fmt/format.h>

#include <map>

namespace kiln::rpc::farm {

std::string EscapeLabel(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

void FarmMetrics::Refused(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  ++refused_[reason];
}

void FarmMetrics::Result(const std::string& status) {
  std::lock_guard<std::mutex> lock(mu_);
  ++results_[status];
}

void FarmMetrics::ObserveCommit(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < kCommitBuckets.size(); ++i) {
    if (seconds <= kCommitBuckets[i]) ++commit_buckets_[i];
  }
  ++commit_count_;
  commit_sum_ += seconds;
}

int64_t FarmMetrics::refused(const std::string& reason) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = refused_.find(reason);
  return it == refused_.end() ? 0 : it->second;
}

std::string FarmMetrics::Render(const v1::FarmStatusResponse& status) const {
  std::string out;
  auto header = [&](const char* name, const char* type, const char* help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  auto pool_label = [](const v1::PoolStatus& p) {
    return EscapeLabel(p.fingerprint().empty() ? p.target() : p.target() + " | " + p.fingerprint());
  };

  header("kiln_farm_workers", "gauge", "Workers connected, per device pool.");
  for (const v1::PoolStatus& p : status.pools()) {
    out += fmt::format("kiln_farm_workers{{pool=\"{}\"}} {}\n", pool_label(p), p.workers());
  }
  header("kiln_farm_queue_depth", "gauge", "Candidates waiting for a worker, per device pool.");
  for (const v1::PoolStatus& p : status.pools()) {
    out += fmt::format("kiln_farm_queue_depth{{pool=\"{}\"}} {}\n", pool_label(p), p.queued());
  }
  header("kiln_farm_leases_in_flight", "gauge", "Leases held by workers, per device pool.");
  for (const v1::PoolStatus& p : status.pools()) {
    out += fmt::format("kiln_farm_leases_in_flight{{pool=\"{}\"}} {}\n", pool_label(p), p.leases_in_flight());
  }
  header("kiln_farm_worker_utilization", "gauge", "Leases in flight over worker slots, per device pool.");
  for (const v1::PoolStatus& p : status.pools()) {
    if (p.slots() <= 0) continue;
    out += fmt::format("kiln_farm_worker_utilization{{pool=\"{}\"}} {}\n", pool_label(p),
                       static_cast<double>(p.leases_in_flight()) / p.slots());
  }
  header("kiln_farm_leases_expired_total", "counter", "Leases not renewed in time and re-queued.");
  out += fmt::format("kiln_farm_leases_expired_total {}\n", status.leases_expired());
  header("kiln_farm_late_results_total", "counter", "Results for candidates that had one already.");
  out += fmt::format("kiln_farm_late_results_total {}\n", status.late_results_dropped());
  header("kiln_farm_jobs_running", "gauge", "Jobs queued or running.");
  out += fmt::format("kiln_farm_jobs_running {}\n", status.jobs_running());

  std::lock_guard<std::mutex> lock(mu_);
  header("kiln_farm_results_total", "counter", "Results posted by workers, by measure status.");
  for (const auto& [s, n] : results_) out += fmt::format("kiln_farm_results_total{{status=\"{}\"}} {}\n", EscapeLabel(s), n);
  header("kiln_farm_refused_total", "counter", "Requests refused, by reason.");
  for (const auto& [r, n] : refused_) out += fmt::format("kiln_farm_refused_total{{reason=\"{}\"}} {}\n", EscapeLabel(r), n);
  header("kiln_farm_commit_seconds", "histogram", "Seconds from a batch's last result until its records are committed and the search has taken them in "
         "(cost model update included).");
  for (size_t i = 0; i < kCommitBuckets.size(); ++i) {
    out += fmt::format("kiln_farm_commit_seconds_bucket{{le=\"{}\"}} {}\n", kCommitBuckets[i], commit_buckets_[i]);
  }
  out += fmt::format("kiln_farm_commit_seconds_bucket{{le=\"+Inf\"}} {}\n", commit_count_);
  out += fmt::format("kiln_farm_commit_seconds_sum {}\n", commit_sum_);
  out += fmt::format("kiln_farm_commit_seconds_count {}\n", commit_count_);
  return out;
}

}  // namespace kiln::rpc::farm
