#include "ir/tensor_intrin/tensor_intrin.h"

#include <algorithm>
#include <functional>
#include <map>

#include "ir/op.h"

namespace kiln::ir {

namespace {

constexpr int64_t kTile = 16;

Buffer Tile(const std::string& name, DataType t, const std::string& scope) {
  return Buffer(name, t, {IntImm(kTile), IntImm(kTile)}, scope);
}

BufferRegion Point(const Buffer& b, const std::vector<Var>& idx) {
  BufferRegion r{b, {}};
  for (const Var& v : idx) r.region.push_back(Range{v, IntImm(1)});
  return r;
}

using BodyFn = std::function<Stmt(const std::vector<Var>& iters)>;
using RegionFn = std::function<std::vector<BufferRegion>(const std::vector<Var>& iters)>;

// One loop nest of 16s (one loop per iterator, outermost first) over one
// block whose iterators are bound to the loops one to one.
PrimFunc Describe(const std::string& name, std::vector<Buffer> params,
                  const std::string& iter_kinds, const RegionFn& reads, const RegionFn& writes,
                  const BodyFn& body) {
  static const char* kNames[] = {"i", "j", "k"};
  std::vector<Var> loops, iters;
  BlockNode block;
  block.name = name;
  for (size_t a = 0; a < iter_kinds.size(); ++a) {
    loops.push_back(Var(kNames[a]));
    iters.push_back(Var(std::string("v") + kNames[a]));
    block.iter_vars.push_back(
        {iters.back(), Range{IntImm(0), IntImm(kTile)},
         iter_kinds[a] == 'S' ? IterType::kDataPar : IterType::kCommReduce});
  }
  block.reads = reads(iters);
  block.writes = writes(iters);
  block.body = body(iters);
  std::vector<Expr> bindings(loops.begin(), loops.end());
  Stmt s = BlockRealize(bindings, BoolImm(true), MakeBlock(std::move(block)));
  for (size_t a = loops.size(); a-- > 0;) {
    s = For(loops[a], IntImm(0), IntImm(kTile), ForKind::kSerial, s);
  }
  PrimFunc f;
  f.name = name;
  f.params = std::move(params);
  f.body = MakeRootBody(s);
  return f;
}

TensorIntrin Fill(const std::string& name) {
  Buffer c = Tile("C", DataType::Float32(), "wmma.accumulator");
  PrimFunc d = Describe(
      name, {c}, "SS", [](const std::vector<Var>&) { return std::vector<BufferRegion>{}; },
      [&](const std::vector<Var>& v) { return std::vector<BufferRegion>{Point(c, {v[0], v[1]})}; },
      [&](const std::vector<Var>& v) {
        return BufferStore(c, FloatImm(0.0, DataType::Float32()), {v[0], v[1]});
      });
  return {name, d, TensorIntrinImpl::kWmmaFill};
}

TensorIntrin Copy(const std::string& name, DataType t, const std::string& from_scope,
                  const std::string& to_scope, TensorIntrinImpl impl) {
  Buffer src = Tile("src", t, from_scope), dst = Tile("dst", t, to_scope);
  PrimFunc d = Describe(
      name, {src, dst}, "SS",
      [&](const std::vector<Var>& v) {
        return std::vector<BufferRegion>{Point(src, {v[0], v[1]})};
      },
      [&](const std::vector<Var>& v) {
        return std::vector<BufferRegion>{Point(dst, {v[0], v[1]})};
      },
      [&](const std::vector<Var>& v) {
        return BufferStore(dst, BufferLoad(src, {v[0], v[1]}), {v[0], v[1]});
      });
  return {name, d, impl};
}

TensorIntrin Mma(const std::string& name) {
  Buffer a = Tile("A", DataType::Float(16), "wmma.matrix_a");
  Buffer b = Tile("B", DataType::Float(16), "wmma.matrix_b");
  Buffer c = Tile("C", DataType::Float32(), "wmma.accumulator");
  const DataType f32 = DataType::Float32();
  PrimFunc d = Describe(
      name, {c, a, b}, "SSR",
      [&](const std::vector<Var>& v) {
        return std::vector<BufferRegion>{Point(c, {v[0], v[1]}), Point(a, {v[0], v[2]}),
                                         Point(b, {v[2], v[1]})};
      },
      [&](const std::vector<Var>& v) { return std::vector<BufferRegion>{Point(c, {v[0], v[1]})}; },
      [&](const std::vector<Var>& v) {
        Expr sum = Add(BufferLoad(c, {v[0], v[1]}),
                       Mul(Cast(f32, BufferLoad(a, {v[0], v[2]})),
                           Cast(f32, BufferLoad(b, {v[2], v[1]}))));
        return BufferStore(c, sum, {v[0], v[1]});
      });
  return {name, d, TensorIntrinImpl::kWmmaMma};
}

const std::map<std::string, TensorIntrin>& Registry() {
  static const std::map<std::string, TensorIntrin> registry = [] {
    const DataType f16 = DataType::Float(16), f32 = DataType::Float32();
    std::vector<TensorIntrin> all = {
        Fill("wmma_fill_16x16x16_f32"),
        Copy("wmma_load_16x16x16_f16_a_shared", f16, "shared", "wmma.matrix_a",
             TensorIntrinImpl::kWmmaLoadA),
        Copy("wmma_load_16x16x16_f16_a_shared_dyn", f16, "shared.dyn", "wmma.matrix_a",
             TensorIntrinImpl::kWmmaLoadA),
        Copy("wmma_load_16x16x16_f16_b_shared", f16, "shared", "wmma.matrix_b",
             TensorIntrinImpl::kWmmaLoadB),
        Copy("wmma_load_16x16x16_f16_b_shared_dyn", f16, "shared.dyn", "wmma.matrix_b",
             TensorIntrinImpl::kWmmaLoadB),
        Mma("wmma_sync_16x16x16_f16f16f32"),
        Copy("wmma_store_16x16x16_f32_global", f32, "wmma.accumulator", "global",
             TensorIntrinImpl::kWmmaStore),
        Copy("wmma_store_16x16x16_f32_shared", f32, "wmma.accumulator", "shared",
             TensorIntrinImpl::kWmmaStore),
    };
    std::map<std::string, TensorIntrin> m;
    for (TensorIntrin& t : all) {
      std::string n = t.name;
      m.emplace(n, std::move(t));
    }
    return m;
  }();
  return registry;
}

constexpr std::pair<TensorIntrinImpl, const char*> kImplNames[] = {
    {TensorIntrinImpl::kWmmaFill, "wmma_fill"},   {TensorIntrinImpl::kWmmaLoadA, "wmma_load_a"},
    {TensorIntrinImpl::kWmmaLoadB, "wmma_load_b"}, {TensorIntrinImpl::kWmmaMma, "wmma_mma"},
    {TensorIntrinImpl::kWmmaStore, "wmma_store"}};

}  // namespace

const TensorIntrin* FindTensorIntrin(const std::string& name) {
  auto it = Registry().find(name);
  return it == Registry().end() ? nullptr : &it->second;
}

std::vector<std::string> TensorIntrinNames() {
  std::vector<std::string> out;
  for (const auto& [n, t] : Registry()) out.push_back(n);
  return out;
}

const char* TensorIntrinImplName(TensorIntrinImpl impl) {
  for (const auto& [i, n] : kImplNames) {
    if (i == impl) return n;
  }
  return "unknown";
}

bool TensorIntrinImplFromName(const std::string& name, TensorIntrinImpl* out) {
  for (const auto& [i, n] : kImplNames) {
    if (name == n) {
      *out = i;
      return true;
    }
  }
  return false;
}

int TensorIntrinWrittenOperand(TensorIntrinImpl impl) {
  switch (impl) {
    case TensorIntrinImpl::kWmmaFill:
    case TensorIntrinImpl::kWmmaMma:
      return 0;
    case TensorIntrinImpl::kWmmaLoadA:
    case TensorIntrinImpl::kWmmaLoadB:
    case TensorIntrinImpl::kWmmaStore:
      return 1;
  }
  return 0;
}

std::optional<LoweredTensorIntrin> AsLoweredTensorIntrin(const ForNode& loop, std::string* why) {
  auto it = loop.annotations.find(kTensorIntrinAttr);
  if (it == loop.annotations.end()) return std::nullopt;
  auto fail = [&](const std::string& w) -> std::optional<LoweredTensorIntrin> {
    if (why != nullptr) *why = "loop " + loop.loop_var.name() + " marked " + kTensorIntrinAttr + ": " + w;
    return std::nullopt;
  };
  const auto* name = it->second.as<StringImmNode>();
  LoweredTensorIntrin out;
  out.intrin = name == nullptr ? nullptr : FindTensorIntrin(name->value);
  if (out.intrin == nullptr) return fail("names no registered tensor intrinsic");
  std::vector<const BufferLoadNode*> loads;
  std::vector<Stmt> stmts;
  if (const auto* seq = loop.body.as<SeqStmtNode>()) {
    stmts = seq->seq;
  } else {
    stmts = {loop.body};
  }
  for (const Stmt& st : stmts) {
    const auto* e = st.as<EvaluateNode>();
    const auto* l = e == nullptr ? nullptr : e->value.as<BufferLoadNode>();
    if (l == nullptr) return fail("its body is not a sequence of T.evaluate(load)");
    loads.push_back(l);
  }
  const size_t n = out.intrin->desc.params.size();
  if (loads.size() != 2 * n) {
    return fail("it needs " + std::to_string(2 * n) + " loads (two per operand), not " +
                std::to_string(loads.size()));
  }
  const int written = TensorIntrinWrittenOperand(out.intrin->impl);
  for (size_t i = 0; i < n; ++i) {
    const BufferLoadNode* a = loads[2 * i];
    const BufferLoadNode* b = loads[2 * i + 1];
    if (!a->buffer.same_as(b->buffer)) return fail("an operand's two loads name two buffers");
    out.operands.push_back({a->buffer, a->indices, b->indices, static_cast<int>(i) == written});
  }
  return out;
}

}  // namespace kiln::ir
