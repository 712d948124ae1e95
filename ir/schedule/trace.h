// The trace: the schedule program as data. Rules write it, mutators edit its
// decisions, the database stores it, workers replay it.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/schedule/instruction.h"

namespace kiln::ir {

// A trace that cannot be read or replayed. what() names the instruction.
class TraceError : public std::runtime_error {
 public:
  explicit TraceError(const std::string& msg) : std::runtime_error(msg) {}
};

// Called for each sampling instruction during replay with the instruction as
// recorded, its inputs translated to the replaying schedule's handles (so a
// provider can inspect the schedule as it stands, as MutateComputeLocation
// does in search/mutator/mutate_compute_location.cc), and the recorded
// decision (nullopt if none); returns the decision to use (nullopt: sample).
using DecisionProvider = std::function<std::optional<nlohmann::json>(
    const Instruction& inst, const std::vector<InstArg>& inputs,
    const std::optional<nlohmann::json>& recorded)>;

class Trace {
 public:
  const std::vector<Instruction>& insts() const { return insts_; }
  // Decisions by instruction index.
  const std::map<size_t, nlohmann::json>& decisions() const { return decisions_; }
  std::optional<nlohmann::json> GetDecision(size_t index) const;
  size_t size() const { return insts_.size(); }

  void Append(Instruction inst, std::optional<nlohmann::json> decision = std::nullopt);
  void Pop();

  // [[[name, inputs, attrs, outputs], ...], [[index, decision], ...]]
  nlohmann::json AsJSON() const;
  std::string AsJSONString() const { return AsJSON().dump(); }
  // Parses and validates (kinds, arity, RV definitions and kinds, decision
  // shapes); throws TraceError naming the instruction and what is wrong.
  static Trace FromJSON(const nlohmann::json& j);
  static Trace FromJSONString(const std::string& text);

  // An exact identity for caches: traces with equal keys hold the same
  // instructions (kinds, inputs, attributes, outputs with their random
  // variables' slots) and the same decisions, so they replay alike. Cheaper
  // than AsJSONString (no JSON tree, no renaming); traces that differ only in
  // their random variables' slots get different keys (a cache miss, never a
  // wrong hit).
  std::string IdentityKey() const;

  // A schedule script: "def apply_trace(sch):" and one line per instruction.
  // For traces a Schedule recorded (a parsed trace: replay it first, which
  // validates every instruction's inputs and attributes).
  std::string AsPython() const;

  // Drops pure instructions whose outputs are never used (and, optionally,
  // everything from EnterPostproc on).
  Trace Simplified(bool remove_postproc) const;
  // A copy with decision `index` replaced (truncated at EnterPostproc when
  // remove_postproc).
  Trace WithDecision(size_t index, nlohmann::json decision, bool remove_postproc) const;
  // A copy without any decisions (a design-space sketch).
  Trace WithoutDecisions() const;
  // Index of the EnterPostproc instruction, or size() if none.
  size_t PostprocIndex() const;

  // Replays every instruction on `sch` (a fresh schedule of the same
  // workload), reusing recorded decisions unless `provider` says otherwise.
  // Throws ScheduleError / TraceError.
  void ApplyToSchedule(Schedule* sch, bool remove_postproc,
                       const DecisionProvider& provider = nullptr) const;

 private:
  std::vector<Instruction> insts_;
  std::map<size_t, nlohmann::json> decisions_;
};

}  // namespace kiln::ir
