// A fact a primitive proved about a schedule's current function, remembered
// so that primitives applied one after another do not prove it again:
// parallel, then unannotate, then vectorize check the same loop and bindings
// (ir/schedule/primitive/for_kind.cc). Only successful checks are noted; a
// failure is checked again and explained. A schedule forgets every fact when
// a primitive installs a new body (Schedule::SetBody), and keeps them when
// only loop kinds, thread tags or annotations changed, which no fact depends on.
#pragma once

#include <cstdint>
#include <string>

#include "ir/expr.h"

namespace kiln::ir {

struct ScheduleFact {
  enum class Kind : uint8_t {
    // The block's iterator bindings are affine (IsAffineBinding in
    // ir/schedule/analysis.h).
    kAffineBinding,
    // The block is a complete block or a reduction block.
    kCompactDataFlow,
    // Iterations of the loop do not feed each other through the blocks
    // under it.
    kSelfContainedLoop,
  };

  static ScheduleFact AffineBinding(std::string block) {
    return {Kind::kAffineBinding, std::move(block), nullptr};
  }
  static ScheduleFact CompactDataFlow(std::string block) {
    return {Kind::kCompactDataFlow, std::move(block), nullptr};
  }
  // The loop is named by the identity of its variable: it keeps it through
  // kind changes, and any other rewrite forgets every fact.
  static ScheduleFact SelfContainedLoop(const Var& loop_var) {
    return {Kind::kSelfContainedLoop, "", loop_var.get()};
  }

  bool operator==(const ScheduleFact&) const = default;

  Kind kind;
  std::string block;                  // the block's (unique) name, for block facts
  const VarNode* loop_var = nullptr;  // for kSelfContainedLoop
};

}  // namespace kiln::ir
