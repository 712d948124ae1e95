#include "search/target_lookup.h"

#include <spdlog/spdlog.h>

#include <stdexcept>

#include "codegen/target_features.h"

namespace kiln::search {
namespace {

std::optional<ir::Target> CanonicalOf(const std::string& stored) {
  try {
    return codegen::CanonicalTarget(ir::Target::Parse(stored));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The faster of two optional records.
void KeepBest(std::optional<database::TuningRecord> candidate, const std::string& target,
              std::optional<database::TuningRecord>* best, std::string* best_target) {
  if (!candidate) return;
  if (!*best || candidate->median_seconds < (*best)->median_seconds) {
    *best = std::move(candidate);
    *best_target = target;
  }
}

}  // namespace

TargetMatch ParseTargetMatch(const std::string& text) {
  if (text == "exact") return TargetMatch::kExact;
  if (text == "compatible") return TargetMatch::kCompatible;
  throw std::invalid_argument("--match '" + text + "': expected 'exact' or 'compatible'");
}

std::vector<std::string> StoredSpellings(const database::Database& db,
                                         database::WorkloadId workload, const ir::Target& asking_in) {
  const ir::Target asking = codegen::CanonicalTarget(asking_in);
  std::vector<std::string> out = {asking.ToString()};
  for (const std::string& stored : db.ExplainMiss(workload, out[0]).other_targets) {
    std::optional<ir::Target> canonical = CanonicalOf(stored);
    if (canonical && *canonical == asking) out.push_back(stored);
  }
  return out;
}

TargetLookup FindBestRecord(const database::Database& db, database::WorkloadId workload,
                            const ir::Target& asking_in, TargetMatch match) {
  const ir::Target asking = codegen::CanonicalTarget(asking_in);
  const std::string asked = asking.ToString();
  TargetLookup out;
  out.miss = db.ExplainMiss(workload, asked);
  if (!out.miss.workload_known) return out;

  // Stored spellings of the asked target (the asked string itself included).
  std::vector<std::string> exact = {asked};
  std::vector<std::pair<std::string, ir::Target>> others;
  std::vector<std::string> remaining;
  for (const std::string& stored : out.miss.other_targets) {
    std::optional<ir::Target> canonical = CanonicalOf(stored);
    if (canonical && *canonical == asking) {
      exact.push_back(stored);
      const database::MissReason m = db.ExplainMiss(workload, stored);
      out.miss.records_this_target += m.records_this_target;
      out.miss.usable_this_target += m.usable_this_target;
    } else {
      remaining.push_back(stored);
      if (canonical) others.emplace_back(stored, *canonical);
    }
  }
  out.miss.other_targets = remaining;

  for (const std::string& t : exact) KeepBest(db.Best(workload, t), t, &out.record, &out.record_target);
  if (out.record) {
    out.exact = true;
    return out;
  }
  if (match != TargetMatch::kCompatible) return out;

  for (const auto& [stored, canonical] : others) {
    std::string why;
    if (!codegen::CompatibleTarget(canonical, asking, &why)) {
      out.refused.push_back("'" + stored + "': " + why);
      continue;
    }
    std::optional<database::TuningRecord> best = db.Best(workload, stored);
    if (!best) {
      out.refused.push_back("'" + stored + "': compatible, but no ok and verified record");
      continue;
    }
    KeepBest(std::move(best), stored, &out.record, &out.record_target);
  }
  if (out.record) {
    out.note = "no record for '" + asked + "'; using one measured on '" + out.record_target +
               "', whose features '" + asked + "' has (same core count)";
  }
  return out;
}

int64_t CanonicalizeStoredTargets(database::Database& db) {
  int64_t changed = 0;
  for (const std::string& stored : db.Targets()) {
    std::optional<ir::Target> canonical = CanonicalOf(stored);
    if (!canonical || canonical->ToString() == stored) continue;
    const int64_t n = db.RenameTarget(stored, canonical->ToString());
    if (n > 0) {
      spdlog::info("database {}: target '{}' is now stored as '{}'", db.path(), stored,
                   canonical->ToString());
    }
    changed += n;
  }
  return changed;
}

}  // namespace kiln::search
