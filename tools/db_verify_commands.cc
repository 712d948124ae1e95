// kiln db verify: re-measure stored records with the correctness check
// (search/verify_records.h) and print, per record, the stored and the new
// median and their ratio. Exits 0 when it could measure (flagged records
// included: the table says which), 1 on an error.
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "database/database.h"
#include "rpc/local_runner.h"
#include "search/target_lookup.h"
#include "search/verify_records.h"
#include "tools/command_guard.h"
#include "tools/commands.h"
#include "tools/progress_text.h"
#include "tools/workload_spec.h"

namespace kiln::tools {
namespace {

struct VerifyCliOptions {
  std::string db;
  std::string workload;
  search::VerifyOptions verify;
  int threads = 0;
  bool as_json = false;
};

std::string Ratio(double r) {
  if (r <= 0) return "-";
  std::ostringstream s;
  s << std::fixed << std::setprecision(3) << r;
  return s.str();
}

int Verify(VerifyCliOptions o) {
  if (!std::ifstream(o.db)) throw std::runtime_error("--db " + o.db + ": no such file");
  database::Database db = database::Database::Open(o.db);
  search::CanonicalizeStoredTargets(db);
  if (!o.workload.empty()) {
    ResolvedWorkload w = ResolveWorkload(o.workload);
    std::optional<database::WorkloadId> id = db.FindWorkload(w.func);
    if (!id) throw std::runtime_error("--workload " + o.workload + ": not in " + o.db);
    o.verify.workload = *id;
  }
  rpc::LocalRunnerOptions runner_options;
  runner_options.build_threads = o.threads;
  rpc::LocalRunner runner(runner_options);
  const search::VerifySummary s = search::VerifyRecords(db, runner, o.verify);

  // Suite workloads are all called "main": the structural hash tells them apart.
  auto label = [&](const search::VerifiedRecord& v) {
    return v.workload_name + "@" + db.WorkloadHash(v.workload).substr(0, 8);
  };
  if (o.as_json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const search::VerifiedRecord& v : s.records) {
      rows.push_back({{"workload", v.workload_name},
                      {"workload_hash", db.WorkloadHash(v.workload)},
                      {"target", v.target},
                      {"trace_hash", v.trace_hash}, {"stored_median", v.stored_median},
                      {"stored_min", v.stored_min}, {"stored_max", v.stored_max},
                      {"new_median", v.new_median}, {"ratio", v.ratio},
                      {"machine_load", v.machine_load}, {"outcome", v.outcome},
                      {"marked_stale", v.marked_stale}, {"message", v.message}});
    }
    std::cout << nlohmann::json{{"records", rows},        {"flagged", s.flagged},
                                {"marked_stale", s.marked_stale}, {"promoted", s.promoted},
                                {"refused", s.refused},  {"skipped", s.skipped}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << std::left << std::setw(28) << "workload" << std::setw(10) << "trace"
            << std::right << std::setw(12) << "stored" << std::setw(12) << "new" << std::setw(8)
            << "ratio" << std::setw(7) << "load" << "  outcome\n";
  for (const search::VerifiedRecord& v : s.records) {
    std::ostringstream load;
    if (v.machine_load >= 0) load << std::fixed << std::setprecision(2) << v.machine_load;
    std::cout << std::left << std::setw(28) << label(v).substr(0, 27) << std::setw(10)
              << v.trace_hash.substr(0, 8) << std::right << std::setw(12)
              << LatencyText(v.stored_median) << std::setw(12)
              << (v.new_median > 0 ? LatencyText(v.new_median) : "-") << std::setw(8)
              << Ratio(v.ratio) << std::setw(7) << (load.str().empty() ? "-" : load.str()) << "  "
              << v.outcome << (v.marked_stale ? " (marked stale)" : "")
              << (v.message.empty() ? "" : ": " + v.message) << "\n";
  }
  std::cout << s.records.size() << " record(s): " << s.flagged << " flagged, " << s.marked_stale
            << " marked stale, " << s.promoted << " promoted, " << s.refused << " refused, "
            << s.skipped << " skipped\n";
  return 0;
}

}  // namespace

void RegisterDbVerifyCommand(CLI::App& app, int* exit_code) {
  CLI::App* db = app.get_subcommand("db");
  auto o = std::make_shared<VerifyCliOptions>();
  o->verify.timing.repeat = 5;
  o->verify.input_seed = 1;
  auto* cmd = db->add_subcommand(
      "verify",
      "Re-measure the best records (or the unverified ones) with the correctness check; flag "
      "those whose new median lies outside the stored spread by more than --threshold");
  cmd->add_option("--db", o->db, "Tuning database file")->required();
  cmd->add_option("--workload,-w", o->workload, "Only this workload (suite name or file)");
  cmd->add_option("--top", o->verify.top, "Best records per workload and target")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  cmd->add_flag("--unverified", o->verify.unverified,
                "Re-measure the unverified records (e.g. imported) and mark those that pass "
                "verified, with the new times");
  cmd->add_flag("--mark-stale", o->verify.mark_stale,
                "Mark flagged records that got slower, and records that fail now, stale: they "
                "never count as best again");
  cmd->add_option("--threshold", o->verify.threshold,
                  "Fraction outside the stored [min, max] of repeats that flags a record")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1000.0));
  cmd->add_option("--repeat", o->verify.timing.repeat, "Timed repeats per record")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--number", o->verify.timing.number, "Calls per repeat")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--min-repeat-ms", o->verify.timing.min_repeat_ms, "Minimum duration of one repeat")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--timeout", o->verify.timing.timeout_s, "Seconds before a candidate is killed")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 1e6));
  cmd->add_option("--threads", o->threads, "Build threads (0: every core)")->capture_default_str();
  cmd->add_flag("--json", o->as_json, "Print the result as JSON");
  cmd->callback([o, exit_code] { Guard(exit_code, [&] { return Verify(*o); }); });
}

}  // namespace kiln::tools
