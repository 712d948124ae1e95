// Finding a workload's best record by target, the way `kiln query` and
// `kiln compile` do (issue 16), and keeping stored target strings in the
// canonical short form of codegen/target_features.h.
//
// A target is asked in its canonical form; a stored target string matches
// when its own canonical form is the same, so records written before targets
// were canonical (the long "-mattr=+64bit,+adx,..." form of `host`) are still
// found. With TargetMatch::kCompatible, a record measured for another CPU
// whose features are a subset of the asking target's, with the same core
// count, is accepted when no exact match is usable, and the result says where
// it came from.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "database/database.h"
#include "ir/target.h"

namespace kiln::search {

enum class TargetMatch { kExact, kCompatible };
// "exact" / "compatible"; std::invalid_argument naming the value otherwise.
TargetMatch ParseTargetMatch(const std::string& text);

struct TargetLookup {
  std::optional<database::TuningRecord> record;  // the best usable record, if any
  std::string record_target;  // the stored target string it was measured for
  bool exact = false;         // that target is the asked one (canonically)
  // When the record came from a compatible target: which one, and why it
  // may serve ("measured on 'llvm -mcpu=znver3 -num-cores=2', whose features
  // the asking target has").
  std::string note;
  // Compatible mode: targets with records that were considered and refused,
  // each with its reason, for --why.
  std::vector<std::string> refused;
  // Counts for the asked target (canonically equal stored targets summed).
  database::MissReason miss;
};

// The stored target strings of `workload` whose canonical form is `asking`'s
// (asking's own canonical string first, whether or not it has records).
std::vector<std::string> StoredSpellings(const database::Database& db,
                                         database::WorkloadId workload, const ir::Target& asking);

// The best ok-and-verified record of `workload` for `asking` (canonicalized
// here), exact matches first. Stored target strings that do not parse or
// name a triple this LLVM lacks are skipped.
TargetLookup FindBestRecord(const database::Database& db, database::WorkloadId workload,
                            const ir::Target& asking, TargetMatch match = TargetMatch::kExact);

// Rewrites every stored target whose canonical form differs from its string
// (Database::RenameTarget). Returns how many target rows changed. Called by
// the commands that open a database read-write, so that a database written
// before targets were canonical is migrated on first use.
int64_t CanonicalizeStoredTargets(database::Database& db);

}  // namespace kiln::search
