// Space generators: turn a workload into its design space, a list of
// schedules whose traces are the sketches the search samples from.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/schedule/schedule.h"
#include "ir/target.h"
#include "search/schedule_rule.h"

namespace kiln::search {

struct TuneContext;

class SpaceGenerator {
 public:
  virtual ~SpaceGenerator() = default;
  virtual void Initialize(const TuneContext& /*ctx*/) {}
  // Schedules of ctx.workload, seeded from ctx.seed. Throws ScheduleError
  // (naming the rule and block) when a rule breaks.
  virtual std::vector<ir::Schedule> Generate(const TuneContext& ctx) = 0;
};
using SpaceGeneratorPtr = std::shared_ptr<SpaceGenerator>;

// TVM's PostOrderApply: for each rule in order, every block of every current
// schedule is offered to it — the root first, then the blocks from the last
// to the first (consumers before producers) — and every schedule the rule
// returns continues as its own branch. A block gone by the time its turn comes
// (inlined by an earlier rule) is skipped, and so is one annotated
// "schedule_rule". Block names must be unique.
class PostOrderApply : public SpaceGenerator {
 public:
  explicit PostOrderApply(std::vector<ScheduleRulePtr> rules) : rules_(std::move(rules)) {}
  void Initialize(const TuneContext& ctx) override;
  std::vector<ir::Schedule> Generate(const TuneContext& ctx) override;
  const std::vector<ScheduleRulePtr>& rules() const { return rules_; }

 private:
  std::vector<ScheduleRulePtr> rules_;
};

// A user-written schedule: `fn` schedules a fresh schedule of the workload in
// place (its trace is the one design space); it may sample.
using ScheduleFnCallback = std::function<void(ir::Schedule&)>;
class ScheduleFn : public SpaceGenerator {
 public:
  explicit ScheduleFn(ScheduleFnCallback fn) : fn_(std::move(fn)) {}
  std::vector<ir::Schedule> Generate(const TuneContext& ctx) override;

 private:
  ScheduleFnCallback fn_;
};

// The generator named `kind`: "post-order-apply" / "from-target" (PostOrderApply
// with the target's default rules; llvm only for now). Throws
// std::invalid_argument naming the kind or target.
SpaceGeneratorPtr MakeSpaceGenerator(const std::string& kind, const ir::Target& target);
std::vector<ScheduleRulePtr> DefaultRulesFor(const ir::Target& target);

}  // namespace kiln::search
