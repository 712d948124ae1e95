#include <utility>

#include "ir/schedule/stmt_path.h"
#include "search/annotations.h"
#include "search/rule_analysis.h"
#include "search/space_generator.h"
#include "search/tune_context.h"

namespace kiln::search {

void PostOrderApply::Initialize(const TuneContext& ctx) {
  for (auto& rule : rules_) rule->Initialize(ctx);
}

std::vector<ir::Schedule> PostOrderApply::Generate(const TuneContext& ctx) {
  ir::Schedule sch(ctx.workload, ctx.seed);
  // Post-order (children before their parents, so the root last) over the
  // unscheduled function; handles are looked up once, as TVM does, and stay
  // valid in every copy.
  std::vector<std::string> names;
  std::vector<const ir::BlockRealizeNode*> pre = ir::AllBlockRealizes(ctx.workload);
  {
    // AllBlockRealizes is pre-order; post-order = each block after all the
    // blocks nested in it, which for a pre-order list is: emit a block once
    // every later block nested inside it is emitted. Depth tells nesting.
    struct Item { std::string name; size_t depth; };
    std::vector<Item> items;
    for (const auto* r : pre) {
      auto path = ir::FindBlockPath(ctx.workload, r->block->name);
      size_t depth = 0;
      for (const ir::Stmt& s : *path) depth += s.as<ir::BlockRealizeNode>() ? 1 : 0;
      items.push_back({r->block->name, depth});
    }
    std::vector<Item> pending;
    for (const Item& it : items) {
      while (!pending.empty() && pending.back().depth >= it.depth) {
        names.push_back(pending.back().name);
        pending.pop_back();
      }
      pending.push_back(it);
    }
    while (!pending.empty()) {
      names.push_back(pending.back().name);
      pending.pop_back();
    }
  }
  std::vector<ir::BlockRV> all_blocks;
  for (const std::string& n : names) all_blocks.push_back(sch.GetBlock(n));

  std::vector<ir::Schedule> result{std::move(sch)};
  for (const ScheduleRulePtr& rule : rules_) {
    std::vector<std::pair<ir::Schedule, size_t>> stack;  // (schedule, blocks left)
    for (ir::Schedule& s : result) stack.emplace_back(std::move(s), all_blocks.size());
    result.clear();
    while (!stack.empty()) {
      auto [s, left] = std::move(stack.back());
      stack.pop_back();
      if (left == 0) {
        result.push_back(std::move(s));
        continue;
      }
      ir::BlockRV block = all_blocks[left - 1];
      if (!s.HasBlock(s.NameOf(block)) || HasAnn(s.Get(block), ann::kScheduleRule)) {
        stack.emplace_back(std::move(s), left - 1);
        continue;
      }
      std::vector<ir::Schedule> applied;
      try {
        applied = rule->Apply(std::move(s), block);
      } catch (const ir::ScheduleError& e) {
        throw ir::ScheduleError("design space", rule->Name() + " failed on block '" +
                                                    names[left - 1] + "': " + e.what());
      }
      for (ir::Schedule& a : applied) stack.emplace_back(std::move(a), left - 1);
    }
  }
  return result;
}

std::vector<ir::Schedule> ScheduleFn::Generate(const TuneContext& ctx) {
  ir::Schedule sch(ctx.workload, ctx.seed);
  fn_(sch);
  return {std::move(sch)};
}

}  // namespace kiln::search
