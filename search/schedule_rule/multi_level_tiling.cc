// MultiLevelTiling: tile a block that has data reuse into the levels of
// `structure` (CPU "SSRSRS": spatial loops split four ways, reduction loops
// two ways, interleaved), then optionally stage its result in a write cache
// placed at one of the tile levels. Each write-reuse choice is a branch.
// On a GPU ("SSSRRSRS") the first levels are also fused and bound to
// tile_binds (blockIdx.x, vthread.x, threadIdx.x), and every input is staged
// in shared memory at a read-reuse level, fetched cooperatively. On a CPU the
// vector operand may also be packed at a tile level (AddPack).
#include <set>

#include "ir/substitute.h"
#include "search/annotations.h"
#include "search/rule_analysis.h"
#include "search/schedule_rule.h"
#include "search/tune_context.h"

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
    for (int level : c_.pack_read.levels) {
      if (level < 1 || level > static_cast<int>(c_.structure.size())) {
        throw std::invalid_argument("MultiLevelTiling: pack level " + std::to_string(level) +
                                    " is outside 1.." + std::to_string(c_.structure.size()));
      }
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
  void Initialize(const TuneContext& ctx) override {
    if (ctx.target.kind == ir::Target::Kind::kCUDA) {
      warp_size_ = ctx.target.WarpSize();
      max_threads_ = ctx.target.MaxThreadsPerBlock();
    }
  }

  std::vector<ir::Schedule> Apply(ir::Schedule sch, ir::BlockRV block) override {
    if (IsRootBlock(sch, block) || !NeedsMultiLevelTiling(sch, block)) return {sch};
    sch.Annotate(block, ann::kTilingStructure, c_.structure);
    State state{std::move(sch), block, {}};
    TileLoopNest(&state);
    std::vector<ir::Schedule> out;
    for (State& s : AddWriteReuse(std::move(state))) {
      for (State& r : AddReadReuse(std::move(s))) {
        for (State& p : AddPack(std::move(r))) out.push_back(std::move(p.sch));
      }
    }
    return out;
  }

 private:
  void TileLoopNest(State* state) const {
    ir::Schedule& sch = state->sch;
    std::vector<ir::LoopRV> loops = sch.GetLoops(state->block);
    const ir::BlockNode& b = sch.Get(state->block);
    std::vector<ir::IterType> types;
    std::vector<ir::Expr> extents;
    for (const ir::IterVar& iv : b.iter_vars) {
      types.push_back(iv.iter_type);
      extents.push_back(iv.dom.extent);
    }
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
    if (c_.tile_binds.empty()) return;
    // GPU: bind the outer levels, and say how many threads a block may have
    // (VerifyGPUCode holds candidates to it).
    for (size_t i = 0; i < c_.tile_binds.size() && i < state->tiles.size(); ++i) {
      std::vector<ir::LoopRV>& level = state->tiles[i];
      if (level.empty()) continue;
      ir::LoopRV fused = level.size() == 1 ? level[0] : sch.Fuse(level);
      sch.Bind(fused, c_.tile_binds[i]);
      level = {fused};
    }
    if (warp_size_ > 0) {
      int64_t spatial = 1;
      for (size_t i = 0; i < loops.size() && i < types.size(); ++i) {
        if (types[i] != ir::IterType::kDataPar) continue;
        const auto* imm = extents[i].as<ir::IntImmNode>();
        spatial *= imm ? imm->value : 1;
      }
      sch.Annotate(state->block, ann::kThreadExtentLow,
                   int64_t{spatial > 2 * warp_size_ ? warp_size_ : 1});
      sch.Annotate(state->block, ann::kThreadExtentHigh, int64_t{max_threads_});
    }
  }

  // GPU: each input not also written is cached in `reuse_read.scope` at the
  // end of tile level L (one branch per level), the cache's loops over the
  // buffer fused, and a vector length for the cooperative fetch sampled.
  std::vector<State> AddReadReuse(State state) const {
    if (c_.reuse_read.req != "must") return {std::move(state)};
    std::vector<State> out;
    for (int level : c_.reuse_read.levels) {
      State s = Fork(state);
      ir::Schedule& sch = s.sch;
      ir::LoopRV at = s.tiles[level - 1].back();
      const size_t n_reads = sch.Get(s.block).reads.size();
      for (size_t i = 0; i < n_reads; ++i) {
        const ir::BlockNode& b = sch.Get(s.block);
        const ir::Buffer buffer = b.reads[i].buffer;
        bool written = false;
        for (const auto& w : b.writes) written = written || w.buffer.same_as(buffer);
        if (written) continue;
        ir::BlockRV cache =
            sch.CacheRead(s.block, static_cast<int>(i), c_.reuse_read.scope, {s.block});
        sch.ComputeAt(cache, at, /*preserve_unit_loops=*/true);
        std::vector<ir::LoopRV> cl = sch.GetLoops(cache);
        const size_t ndim = buffer.ndim();
        if (ndim > 1 && cl.size() >= ndim) sch.Fuse({cl.end() - static_cast<long>(ndim), cl.end()});
        std::vector<int64_t> lens;
        const int bytes = (buffer.dtype().bits() + 7) / 8;
        for (int64_t len : c_.vector_load_lens) {
          if (len * bytes > 16) continue;
          if (bytes == 2 && len != 1 && len % 2 != 0) continue;
          lens.push_back(len);
        }
        if (lens.empty()) continue;
        std::vector<double> probs(lens.size(), 1.0 / static_cast<double>(lens.size()));
        sch.Annotate(cache, ann::kCooperativeFetch, sch.SampleCategorical(lens, probs));
      }
      out.push_back(std::move(s));
    }
    return out;
  }

  // CPU: copy the vector operand (PackableRead) into a compact buffer at the
  // end of tile level L, one branch per level; with "may", the unpacked state
  // comes first.
  std::vector<State> AddPack(State state) const {
    if (c_.pack_read.req == "no" || !c_.tile_binds.empty()) return {std::move(state)};
    const int read = PackableRead(state.sch.Get(state.block));
    if (read < 0) return {std::move(state)};
    std::vector<State> packed;
    for (int level : c_.pack_read.levels) {
      State s = Fork(state);
      ir::BlockRV cache = s.sch.CacheRead(s.block, read, c_.pack_read.scope, {s.block});
      s.sch.ComputeAt(cache, s.tiles[level - 1].back(), /*preserve_unit_loops=*/true);
      packed.push_back(std::move(s));
    }
    std::vector<State> out;
    if (c_.pack_read.req == "may") out.push_back(std::move(state));
    for (State& s : packed) out.push_back(std::move(s));
    return out;
  }

  // The read worth packing: a buffer of two or more dimensions, not written
  // by the block, whose last index is the innermost spatial iter var with
  // stride 1 (the vectorized loads come from it), whose rows are 1 KiB or
  // longer (a panel of such rows falls on few cache sets; shorter rows, as a
  // convolution's weights, gained nothing and trapped searches when packed:
  // docs/ARCHITECTURE.md §4), and which leaves another spatial iter var
  // unused (the copy is reused across that axis); -1 if none.
  static int PackableRead(const ir::BlockNode& b) {
    const std::vector<const ir::VarNode*> spatial = NonUnitSpatialVars(b);
    if (spatial.size() < 2) return -1;
    const ir::VarNode* inner = spatial.back();
    for (size_t i = 0; i < b.reads.size(); ++i) {
      const ir::BufferRegion& r = b.reads[i];
      if (r.region.size() < 2) continue;
      bool written = false;
      for (const auto& w : b.writes) written = written || w.buffer.same_as(r.buffer);
      if (written) continue;
      const auto* row = r.buffer->shape.back().as<ir::IntImmNode>();
      if (!row || row->value * ((r.buffer.dtype().bits() + 7) / 8) < kMinPackedRowBytes) continue;
      const ir::Range& last = r.region.back();
      const auto* ext = last.extent.as<ir::IntImmNode>();
      if (!ext || ext->value != 1 || StrideOf(last.min, inner) != 1) continue;
      std::set<const ir::VarNode*> used;
      for (const ir::Range& d : r.region) {
        for (const ir::VarNode* v : ir::FreeVars(d.min)) used.insert(v);
      }
      for (const ir::VarNode* v : spatial) {
        if (!used.count(v)) return static_cast<int>(i);
      }
    }
    return -1;
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

  static constexpr int64_t kMinPackedRowBytes = 1024;

  MultiLevelTilingConfig c_;
  std::vector<int> s_indices_, r_indices_;
  int64_t warp_size_ = -1;  // GPU targets only
  int64_t max_threads_ = -1;
};

}  // namespace

ScheduleRulePtr MakeMultiLevelTiling(MultiLevelTilingConfig config) {
  return std::make_shared<MultiLevelTiling>(std::move(config));
}

}  // namespace kiln::search
