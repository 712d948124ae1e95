// MultiLevelTiling: tile a block that has data reuse into the levels of
// `structure` (CPU "SSRSRS": spatial loops split four ways, reduction loops
// two ways, interleaved), then optionally stage its result in a write cache
// placed at one of the tile levels. Each write-reuse choice is a branch.
#include "search/analysis.h"
#include "search/annotations.h"
#include "search/schedule_rule.h"

namespace kiln::search {
namespace {

struct State {
  ir::Schedule sch;
  ir::BlockRV block;
  std::vector<std::vector<ir::LoopRV>> tiles;  // per structure level, outer to inner
};

class MultiLevelTiling : public ScheduleRule {
 public:
  explicit MultiLevelTiling(MultiLevelTilingConfig c) : c_(std::move(c)) {
    for (int i = 0; i < static_cast<int>(c_.structure.size()); ++i) {
      char ch = c_.structure[i];
      if (ch == 'S') {
        s_indices_.push_back(i);
      } else if (ch == 'R') {
        r_indices_.push_back(i);
      } else {
        throw std::invalid_argument("MultiLevelTiling: structure '" + c_.structure +
                                    "' may hold only 'S' and 'R'");
      }
    }
    if (s_indices_.empty() || r_indices_.empty()) {
      throw std::invalid_argument("MultiLevelTiling: structure '" + c_.structure +
                                  "' needs at least one 'S' and one 'R'");
    }
    for (int level : c_.reuse_write.levels) {
      if (level < 1 || level > static_cast<int>(c_.structure.size())) {
        throw std::invalid_argument("MultiLevelTiling: write-reuse level " +
                                    std::to_string(level) + " is outside 1.." +
                                    std::to_string(c_.structure.size()));
      }
    }
  }
  std::string Name() const override { return "MultiLevelTiling"; }

  std::vector<ir::Schedule> Apply(ir::Schedule sch, ir::BlockRV block) override {
    if (IsRootBlock(sch, block) || !NeedsMultiLevelTiling(sch, block)) return {sch};
    sch.Annotate(block, ann::kTilingStructure, c_.structure);
    State state{std::move(sch), block, {}};
    TileLoopNest(&state);
    std::vector<ir::Schedule> out;
    for (State& s : AddWriteReuse(std::move(state))) out.push_back(std::move(s.sch));
    return out;
  }

 private:
  void TileLoopNest(State* state) const {
    ir::Schedule& sch = state->sch;
    std::vector<ir::LoopRV> loops = sch.GetLoops(state->block);
    const ir::BlockNode& b = sch.Get(state->block);
    std::vector<ir::IterType> types;
    for (const ir::IterVar& iv : b.iter_vars) types.push_back(iv.iter_type);
    state->tiles.assign(c_.structure.size(), {});
    for (size_t i = 0; i < loops.size() && i < types.size(); ++i) {
      const std::vector<int>* idx = nullptr;
      if (types[i] == ir::IterType::kDataPar) {
        idx = &s_indices_;
      } else if (types[i] == ir::IterType::kCommReduce) {
        idx = &r_indices_;
      } else {
        continue;
      }
      const int n = static_cast<int>(idx->size());
      if (n == 1) {
        state->tiles[idx->at(0)].push_back(loops[i]);
        continue;
      }
      std::vector<ir::ExprRV> factors = sch.SamplePerfectTile(loops[i], n, c_.max_innermost_factor);
      std::vector<ir::LoopRV> splits = sch.Split(loops[i], {factors.begin(), factors.end()});
      for (int j = 0; j < n; ++j) state->tiles[idx->at(j)].push_back(splits[j]);
    }
    std::vector<ir::LoopRV> order;
    for (const auto& level : state->tiles) order.insert(order.end(), level.begin(), level.end());
    sch.Reorder(order);
  }

  // A copy of the state whose schedule draws from its own forked stream.
  static State Fork(State& s) {
    State copy = s;
    copy.sch = s.sch.Copy();
    return copy;
  }

  std::vector<State> AddWriteReuse(State state) const {
    std::string req = c_.reuse_write.req;
    std::vector<int> levels = c_.reuse_write.levels;
    const ir::BlockNode& b = state.sch.Get(state.block);
    if (auto level = IntAnn(b.annotations, ann::kWriteCacheLevel)) {
      req = "must";
      levels = {static_cast<int>(*level)};
    }
    if (req == "no") return {std::move(state)};
    std::vector<State> out;
    if (req == "may") {
      std::vector<ir::BlockRV> consumers = state.sch.GetConsumers(state.block);
      if (consumers.size() == 1 && IsWriteCache(state.sch.Get(consumers[0]))) {
        // A cache is already there (from a user schedule): only place it.
        for (int level : levels) {
          State s = Fork(state);
          s.sch.ReverseComputeAt(consumers[0], s.tiles[level - 1].back(), true);
          out.push_back(std::move(s));
        }
        out.push_back(std::move(state));
        return out;
      }
      out.push_back(Fork(state));
    }
    ir::BlockRV cache = state.sch.CacheWrite(state.block, 0, c_.reuse_write.scope);
    for (int level : levels) {
      State s = Fork(state);
      s.sch.ReverseComputeAt(cache, s.tiles[level - 1].back(), true);
      out.push_back(std::move(s));
    }
    return out;
  }

  MultiLevelTilingConfig c_;
  std::vector<int> s_indices_, r_indices_;
};

}  // namespace

ScheduleRulePtr MakeMultiLevelTiling(MultiLevelTilingConfig config) {
  return std::make_shared<MultiLevelTiling>(std::move(config));
}

}  // namespace kiln::search
