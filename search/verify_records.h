// `kiln db verify` (issue 22; imported records, issue 21): measure stored
// records again, with the correctness check, and say whether they hold.
//
// Two uses:
// - the bests (default): the `top` best usable records of each (workload,
//   target) are re-measured; a record whose new median lies outside its
//   stored spread [min, max] of run_seconds by more than `threshold` (a
//   fraction) is flagged. With mark_stale, a flagged record that got slower,
//   and one that fails now, is marked stale in the database: it never counts
//   as best again (database/FORMAT.md).
// - unverified records (records with verified = 0 and status ok, e.g. imported
//   from TVM): each is re-measured; one that passes the check becomes
//   verified with the new times (they replace the stored ones, which another
//   machine or tool measured); one that fails stays unverified and takes the
//   failure's status and message.
//
// A record is measured for the target it was tuned for, which must run here
// (codegen/target_features.h, CompatibleTarget with this host's features and
// the record's core count); others are skipped with the reason.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "database/database.h"
#include "search/measure.h"

namespace kiln::search {

struct VerifyOptions {
  std::optional<database::WorkloadId> workload;  // only this workload; all when empty
  int top = 5;              // bests per (workload, target)
  bool unverified = false;  // re-measure the unverified records instead of the bests
  bool mark_stale = false;
  double threshold = 0.10;  // how far outside the stored spread flags a record
  TimingConfig timing;      // how each record is measured
  uint64_t input_seed = 0;
};

struct VerifiedRecord {
  database::WorkloadId workload = 0;
  std::string workload_name;
  std::string target;
  std::string trace_hash;
  double stored_median = 0;
  double stored_min = 0, stored_max = 0;  // the stored spread
  double new_median = 0;                  // 0 unless measured ok
  double ratio = 0;                       // new / stored median; 0 unless measured ok
  double machine_load = -1;               // of the new measurement
  // "ok" (holds), "slower" / "faster" (flagged), "failed" (the re-measure
  // failed), "promoted" / "refused" (--unverified), "skipped" (cannot run here)
  std::string outcome;
  bool marked_stale = false;
  std::string message;  // why skipped / failed / refused
};

struct VerifySummary {
  std::vector<VerifiedRecord> records;
  int64_t flagged = 0;  // slower, faster or failed
  int64_t marked_stale = 0;
  int64_t promoted = 0;
  int64_t refused = 0;
  int64_t skipped = 0;
};

// Whether a record measured for `record_target` can be measured on this
// machine; *why says why not.
bool CanMeasureHere(const std::string& record_target, std::string* why);

// Measures through `runner` and writes to `db` (stale marks, promotions)
// as described above. Throws database::DatabaseError when the database fails,
// std::invalid_argument for bad options.
VerifySummary VerifyRecords(database::Database& db, Runner& runner, const VerifyOptions& opts);

}  // namespace kiln::search
