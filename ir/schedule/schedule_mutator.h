// The narrow door to a schedule's implementation hooks for the code of the
// primitives that is not a Schedule member: helpers shared between
// primitives (ir/schedule/primitive/cache_util.cc, annotate.cc,
// compute_at.cc, for_kind.cc) install a new body, make handles, note facts
// and record the instruction through it. The hooks are private to Schedule
// (schedule.h); this class is its only friend. Only primitive files and the
// schedule's tests include this header: search, tools and everything else
// change a schedule through its public primitives.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/schedule/schedule.h"

namespace kiln::ir {

class ScheduleMutator {
 public:
  explicit ScheduleMutator(Schedule& sch) : sch_(sch) {}

  // Installs a new function body; forgets every fact (schedule_fact.h).
  void SetBody(Stmt body) { sch_.SetBody(std::move(body)); }
  // For a change of loop kinds, thread tags or annotations only: the facts stay.
  void SetBodyKeepingFacts(Stmt body) { sch_.SetBodyKeepingFacts(std::move(body)); }

  // The body sample_compute_location built for moving `block` under the
  // loop of `loop_var` with unit loops preserved at the default position, if
  // it is the move it planned on the current body (schedule.h); null if not.
  const Stmt* PlannedMove(const std::string& block, const VarNode* loop_var) const {
    const auto& m = sch_.planned_move_;
    return m && m->block == block && m->loop_var == loop_var ? &m->body : nullptr;
  }

  bool KnowsFact(const ScheduleFact& fact) const { return sch_.KnowsFact(fact); }
  void NoteFact(ScheduleFact fact) { sch_.NoteFact(std::move(fact)); }

  BlockRV NewBlockRV(const std::string& block_name) { return sch_.NewBlockRV(block_name); }
  LoopRV NewLoopRV(const Var& loop_var) { return sch_.NewLoopRV(loop_var); }
  // The inline (true) or root (false) location mark.
  LoopRV NewLocationMarkRV(bool inline_mark) { return sch_.NewLocationMarkRV(inline_mark); }

  // Appends one instruction to the trace.
  void Record(const std::string& kind, std::vector<InstArg> inputs, nlohmann::json attrs,
              std::vector<RVRef> outputs, std::optional<nlohmann::json> decision = std::nullopt) {
    sch_.Record(kind, std::move(inputs), std::move(attrs), std::move(outputs), std::move(decision));
  }

 private:
  Schedule& sch_;
};

}  // namespace kiln::ir
