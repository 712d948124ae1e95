// MultiLevelTilingTensorCore (CUDA, sm_80 and later): an fp16 GEMM block
// (Z[.., i, j] += f32(X[.., i, k]) * f32(Y[.., k, j]), row-major operands,
// i, j and k multiples of 16) runs on tensor cores through the wmma
// intrinsics of ir/tensor_intrin/tensor_intrin.h. The block is tiled to 16x16x16
// and blockized; the fragment grid is tiled "SSRSRS":
//   S0 (batch, i0, j0) -> blockIdx.x       S1 (i1, j1) -> threadIdx.y (warps)
//   R0 (k0)                                S2 (i2, j2)
//   R1 (k1)                                S3 (i3, j3), then the 16x16x16 MMA
// X and Y are staged in shared memory at R0, fetched by all threads of the
// block (threadIdx.y x 32 lanes), and loaded into wmma.matrix_a / matrix_b
// fragments at R1; the accumulator lives in wmma.accumulator fragments for
// the warp's whole S2 x S3 tile, is zeroed before R0 and stored to Z after
// the warp's reduction. Every stage is tensorized in the rule (TVM defers
// that to RewriteTensorize; here the trace then holds the whole schedule
// and a replay re-checks every match).
//
// The wmma statements sit under no threadIdx.x loop, so all 32 lanes of a
// warp run them, as the warp-wide wmma operations need; threadIdx.x comes
// from the cooperative fetch. Blocks the rule does not apply to are left to
// MultiLevelTiling, which runs after it in the CUDA rule list.
#include <cctype>
#include <optional>

#include "ir/op.h"
#include "ir/schedule/analysis.h"
#include "ir/schedule/tensorize.h"
#include "search/annotations.h"
#include "search/rule_analysis.h"
#include "search/schedule_rule.h"
#include "search/schedule_rule/multi_level_tiling_tensor_core.h"
#include "search/tune_context.h"

namespace kiln::search {
namespace {

constexpr int64_t kFrag = 16;
constexpr int kMaxInnermost = 4;

// The roles of a GEMM block's iterators and reads.
struct Gemm {
  std::vector<int> batch;  // iterator indices
  int i = -1, j = -1, k = -1;
  ir::Buffer a, b;  // the float16 operands: A[.., i, k], B[.., k, j]
};

const ir::VarNode* PointVar(const ir::Range& r) {
  if (!ir::IsConstInt(r.extent, 1)) return nullptr;
  return r.min.as<ir::VarNode>();
}

int IterIndex(const ir::BlockNode& b, const ir::VarNode* v) {
  for (size_t i = 0; i < b.iter_vars.size(); ++i) {
    if (b.iter_vars[i].var.get() == v) return static_cast<int>(i);
  }
  return -1;
}

// The iterator indices of a point region's dimensions, or {} if some
// dimension is not a single iterator.
std::vector<int> Dims(const ir::BlockNode& b, const ir::BufferRegion& r) {
  std::vector<int> out;
  for (const ir::Range& rg : r.region) {
    const ir::VarNode* v = PointVar(rg);
    int idx = v ? IterIndex(b, v) : -1;
    if (idx < 0) return {};
    out.push_back(idx);
  }
  return out;
}

std::optional<Gemm> MatchGemm(const ir::Schedule& sch, ir::BlockRV block) {
  const ir::BlockNode& b = sch.Get(block);
  if (!b.init || b.writes.size() != 1 || b.writes[0].buffer.dtype() != ir::DataType::Float32()) {
    return std::nullopt;
  }
  if (!ir::IsTrivialBinding(sch.PathOf(block))) return std::nullopt;
  const ir::Buffer& z = b.writes[0].buffer;
  std::vector<const ir::BufferRegion*> ins;
  for (const ir::BufferRegion& r : b.reads) {
    if (r.buffer.same_as(z)) continue;
    if (r.buffer.dtype() != ir::DataType::Float(16)) return std::nullopt;
    ins.push_back(&r);
  }
  if (ins.size() != 2) return std::nullopt;
  std::vector<int> zd = Dims(b, b.writes[0]), ad = Dims(b, *ins[0]), bd = Dims(b, *ins[1]);
  if (zd.size() < 2 || ad.size() != zd.size() || bd.size() != zd.size()) return std::nullopt;
  const size_t n = zd.size();
  Gemm g;
  g.i = zd[n - 2];
  g.j = zd[n - 1];
  g.k = ad[n - 1];
  g.a = ins[0]->buffer;
  g.b = ins[1]->buffer;
  if (ad[n - 2] != g.i || bd[n - 2] != g.k || bd[n - 1] != g.j) return std::nullopt;
  for (size_t d = 0; d + 2 < n; ++d) {
    if (ad[d] != zd[d] || bd[d] != zd[d]) return std::nullopt;
    g.batch.push_back(zd[d]);
  }
  if (b.iter_vars.size() != n + 1) return std::nullopt;
  for (int idx : {g.i, g.j, g.k}) {
    int64_t e = 0;
    if (!ir::AsConstInt(b.iter_vars[idx].dom.extent, &e) || e % kFrag != 0) return std::nullopt;
  }
  if (b.iter_vars[g.k].iter_type != ir::IterType::kCommReduce ||
      b.iter_vars[g.i].iter_type != ir::IterType::kDataPar ||
      b.iter_vars[g.j].iter_type != ir::IterType::kDataPar) {
    return std::nullopt;
  }
  return g;
}

int ReadIndex(const ir::Schedule& sch, ir::BlockRV block, const std::string& buffer_name) {
  const ir::BlockNode& b = sch.Get(block);
  for (size_t i = 0; i < b.reads.size(); ++i) {
    if (b.reads[i].buffer.name() == buffer_name) return static_cast<int>(i);
  }
  throw ir::ScheduleError("MultiLevelTilingTensorCore",
                          "block '" + b.name + "' does not read " + buffer_name);
}

// Splits the last two loops of a copy block into 16x16 tiles and tensorizes
// the tile with `intrin`.
void TensorizeCopy(ir::Schedule& sch, ir::BlockRV copy, const std::string& intrin) {
  std::vector<ir::LoopRV> l = sch.GetLoops(copy);
  auto r = sch.Split(l[l.size() - 2], {std::monostate{}, kFrag});
  auto c = sch.Split(l[l.size() - 1], {std::monostate{}, kFrag});
  sch.Reorder({r[0], c[0], r[1], c[1]});
  ir::Tensorize(sch, r[1], intrin);
}

class MultiLevelTilingTensorCore : public ScheduleRule {
 public:
  std::string Name() const override { return "MultiLevelTilingTensorCore"; }
  void Initialize(const TuneContext& ctx) override {
    enabled_ = false;
    const std::string& arch = ctx.target.arch;
    if (ctx.target.kind != ir::Target::Kind::kCUDA || arch.rfind("sm_", 0) != 0) return;
    int sm = 0;
    for (size_t i = 3; i < arch.size() && std::isdigit(static_cast<unsigned char>(arch[i])); ++i) {
      sm = sm * 10 + (arch[i] - '0');
    }
    enabled_ = sm >= 80;
  }

  std::vector<ir::Schedule> Apply(ir::Schedule sch, ir::BlockRV block) override {
    if (!enabled_ || IsRootBlock(sch, block)) return {sch};
    std::optional<Gemm> g = MatchGemm(sch, block);
    if (!g) return {sch};
    ir::Schedule s = sch.Copy();
    try {
      Build(s, block, *g);
    } catch (const ir::ScheduleError&) {
      return {sch};  // some step does not apply here: MultiLevelTiling takes it
    }
    return {s};
  }

 private:
  void Build(ir::Schedule& sch, ir::BlockRV z, const Gemm& g) const {
    sch.Annotate(z, ann::kTilingStructure, std::string("SSRSRS"));
    const std::string a_name = g.a.name(), b_name = g.b.name();
    ir::BlockRV a_shared = sch.CacheRead(z, ReadIndex(sch, z, a_name), "shared");
    ir::BlockRV b_shared = sch.CacheRead(z, ReadIndex(sch, z, b_name), "shared");
    const std::string a_sh = sch.Get(a_shared).writes[0].buffer.name();
    const std::string b_sh = sch.Get(b_shared).writes[0].buffer.name();
    ir::BlockRV a_frag = sch.CacheRead(z, ReadIndex(sch, z, a_sh), "wmma.matrix_a");
    ir::BlockRV b_frag = sch.CacheRead(z, ReadIndex(sch, z, b_sh), "wmma.matrix_b");
    ir::BlockRV store = sch.CacheWrite(z, 0, "wmma.accumulator");

    // 16x16x16 tiles, blockized.
    std::vector<ir::LoopRV> loops = sch.GetLoops(z);  // one per iterator, in order
    auto i = sch.Split(loops[g.i], {std::monostate{}, kFrag});
    auto j = sch.Split(loops[g.j], {std::monostate{}, kFrag});
    auto k = sch.Split(loops[g.k], {std::monostate{}, kFrag});
    auto tile = [&](ir::LoopRV l, int n) {
      std::vector<ir::ExprRV> f = sch.SamplePerfectTile(l, n, kMaxInnermost);
      return sch.Split(l, {f.begin(), f.end()});
    };
    auto is = tile(i[0], 4), js = tile(j[0], 4), ks = tile(k[0], 2);
    sch.Reorder({is[0], js[0], is[1], js[1], ks[0], is[2], js[2], ks[1], is[3], js[3], i[1], j[1],
                 k[1]});
    ir::BlockRV outer = sch.Blockize(i[1]);

    std::vector<ir::LoopRV> s0;
    for (int bi : g.batch) s0.push_back(loops[bi]);
    s0.push_back(is[0]);
    s0.push_back(js[0]);
    ir::LoopRV bx = sch.Fuse(s0);
    sch.Bind(bx, "blockIdx.x");
    ir::LoopRV ty = sch.Fuse({is[1], js[1]});
    sch.Bind(ty, "threadIdx.y");

    sch.ReverseComputeAt(store, ty, /*preserve_unit_loops=*/true);
    ir::BlockRV init = sch.DecomposeReduction(outer, ks[0]);
    sch.ComputeAt(a_frag, ks[1], true);
    sch.ComputeAt(b_frag, ks[1], true);
    sch.ComputeAt(a_shared, ks[0], true);
    sch.ComputeAt(b_shared, ks[0], true);
    // Cooperative fetch by every thread of the block, warps x lanes:
    // RewriteCooperativeFetch splits and binds the fused loop once the
    // warp count is known (it is sampled).
    sch.Annotate(outer, ann::kWarpExecution, int64_t{1});
    for (ir::BlockRV fetch : {a_shared, b_shared}) {
      std::vector<ir::LoopRV> l = sch.GetLoops(fetch);
      const size_t ndim = sch.Get(fetch).writes[0].buffer.ndim();
      sch.Fuse({l.end() - static_cast<long>(ndim), l.end()});
      sch.Annotate(fetch, ann::kCooperativeFetch, int64_t{1});
    }
    ir::Tensorize(sch, outer, "wmma_sync_16x16x16_f16f16f32");
    ir::Tensorize(sch, init, "wmma_fill_16x16x16_f32");
    TensorizeCopy(sch, a_frag, "wmma_load_16x16x16_f16_a_shared");
    TensorizeCopy(sch, b_frag, "wmma_load_16x16x16_f16_b_shared");
    TensorizeCopy(sch, store, "wmma_store_16x16x16_f32_global");
  }

  bool enabled_ = false;
};

}  // namespace

ScheduleRulePtr MakeMultiLevelTilingTensorCore() {
  return std::make_shared<MultiLevelTilingTensorCore>();
}

}  // namespace kiln::search
