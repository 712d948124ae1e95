#include "cost_model/feature_extractor.h"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <unordered_map>

#include "cost_model/buffer_access_features.h"
#include "cost_model/loop_nest.h"
#include "ir/error.h"
#include "ir/op.h"
#include "ir/transform/passes.h"
#include "support/parallel_for.h"

namespace kiln::cost_model {
namespace {

using internal::LoopNest;
using internal::Slog;

constexpr int kCurveSamples = 10;
constexpr char kAutoUnrollMaxStep[] = "pragma_auto_unroll_max_step";

// ---- Group 1: arithmetic -------------------------------------------------

struct ArithOps {
  double float_mad = 0, float_add_sub = 0, float_mul = 0, float_div_mod = 0, float_cmp = 0,
         float_math_func = 0, float_other_func = 0;
  double int_mad = 0, int_add_sub = 0, int_mul = 0, int_div_mod = 0, int_cmp = 0,
         int_math_func = 0, int_other_func = 0;
  double bool_op = 0, select_op = 0;

  // Floating-point operations for the arithmetic-intensity curve: a
  // multiply-add is two of them, as TVM (whose MAD counter stays 0) counts it.
  double FloatOps() const {
    return 2 * float_mad + float_add_sub + float_mul + float_div_mod + float_cmp +
           float_math_func + float_other_func;
  }
};

bool IsFloatType(const ir::DataType& t) { return t.is_floating(); }

// Counts the operations of a stored value, each weighted by the number of
// times the store runs (the product of the loop extents around it).
class ArithCounter {
 public:
  explicit ArithCounter(double weight) : w_(weight) {}
  ArithOps ops;

  void Visit(const ir::Expr& e) {
    if (!e.defined()) return;
    switch (e.kind()) {
      case ir::ExprKind::kIntImm:
      case ir::ExprKind::kFloatImm:
      case ir::ExprKind::kStringImm:
      case ir::ExprKind::kVar:
        return;
      case ir::ExprKind::kNot:
        ops.bool_op += w_;
        Visit(e.as<ir::NotNode>()->a);
        return;
      case ir::ExprKind::kSelect: {
        const auto* s = e.as<ir::SelectNode>();
        ops.select_op += w_;
        Visit(s->condition);
        Visit(s->true_value);
        Visit(s->false_value);
        return;
      }
      case ir::ExprKind::kCast: Visit(e.as<ir::CastNode>()->value); return;
      case ir::ExprKind::kBufferLoad:
        for (const ir::Expr& i : e.as<ir::BufferLoadNode>()->indices) Visit(i);
        return;
      case ir::ExprKind::kCall: {
        const auto* c = e.as<ir::CallNode>();
        // The lazy if_then_else is a select (TVM counts it as a math call);
        // every other intrinsic of Kiln's fixed set is a pure math function.
        if (c->op == ir::CallOp::kIfThenElse) {
          ops.select_op += w_;
        } else if (IsFloatType(c->dtype)) {
          ops.float_math_func += w_;
        } else {
          ops.int_math_func += w_;
        }
        for (const ir::Expr& a : c->args) Visit(a);
        return;
      }
      case ir::ExprKind::kRamp:
        Visit(e.as<ir::RampNode>()->base);
        Visit(e.as<ir::RampNode>()->stride);
        return;
      case ir::ExprKind::kBroadcast: Visit(e.as<ir::BroadcastNode>()->value); return;
      default: VisitBinary(e, e.as<ir::BinaryNode>()); return;
    }
  }

 private:
  void VisitBinary(const ir::Expr& e, const ir::BinaryNode* b) {
    if (b == nullptr) return;
    // Comparisons produce bool: their operands' type says float or int
    // (TVM looks at the bool result and always counts them as int).
    const bool is_float = IsFloatType(ir::IsComparison(e.kind()) ? b->a.dtype() : e.dtype());
    auto count = [&](double ArithOps::*f, double ArithOps::*i) {
      (ops.*(is_float ? f : i)) += w_;
    };
    switch (e.kind()) {
      case ir::ExprKind::kAdd:
      case ir::ExprKind::kSub: {
        // a * b + c (or c ± a * b) is one multiply-add: the form an FMA
        // instruction takes. One multiply operand is fused; the other (if
        // any) counts as a plain multiply.
        const ir::Expr* fused = nullptr;
        if (b->a.kind() == ir::ExprKind::kMul) {
          fused = &b->a;
        } else if (b->b.kind() == ir::ExprKind::kMul) {
          fused = &b->b;
        }
        if (fused != nullptr) {
          count(&ArithOps::float_mad, &ArithOps::int_mad);
          const auto* m = fused->as<ir::BinaryNode>();
          Visit(m->a);
          Visit(m->b);
          Visit(fused == &b->a ? b->b : b->a);
          return;
        }
        count(&ArithOps::float_add_sub, &ArithOps::int_add_sub);
        break;
      }
      case ir::ExprKind::kMul: count(&ArithOps::float_mul, &ArithOps::int_mul); break;
      case ir::ExprKind::kDiv:
      case ir::ExprKind::kMod:
      case ir::ExprKind::kFloorDiv:
      case ir::ExprKind::kFloorMod:
        count(&ArithOps::float_div_mod, &ArithOps::int_div_mod);
        break;
      case ir::ExprKind::kMin:
      case ir::ExprKind::kMax:
      case ir::ExprKind::kEQ:
      case ir::ExprKind::kNE:
      case ir::ExprKind::kLT:
      case ir::ExprKind::kLE:
      case ir::ExprKind::kGT:
      case ir::ExprKind::kGE:
        count(&ArithOps::float_cmp, &ArithOps::int_cmp);
        break;
      case ir::ExprKind::kAnd:
      case ir::ExprKind::kOr: ops.bool_op += w_; break;
      default: break;
    }
    Visit(b->a);
    Visit(b->b);
  }

  double w_;
};

void AppendArith(const ArithOps& a, std::vector<float>* out) {
  for (double v : {a.float_mad, a.float_add_sub, a.float_mul, a.float_div_mod, a.float_cmp,
                   a.float_math_func, a.float_other_func, a.int_mad, a.int_add_sub, a.int_mul,
                   a.int_div_mod, a.int_cmp, a.int_math_func, a.int_other_func, a.bool_op,
                   a.select_op}) {
    out->push_back(static_cast<float>(Slog(v)));
  }
}

// num, prod, innermost length and the position one-hot of the loops of one
// kind. TVM never computes the position: it is "none" without such loops
// and "mixed" otherwise, and Kiln keeps that so rows stay comparable.
void AppendForKind(const LoopNest& nest, const std::vector<size_t>& loops,
                   std::vector<float>* out) {
  double num = 0, prod = 0, len = 0;
  int pos = 0;
  if (!loops.empty()) {
    num = static_cast<double>(loops.size());
    prod = 1;
    for (size_t i : loops) prod *= static_cast<double>(nest.ExtentOr1(i));
    len = static_cast<double>(nest.ExtentOr1(loops.back()));
    pos = 7;
  }
  out->push_back(static_cast<float>(Slog(num)));
  out->push_back(static_cast<float>(Slog(prod)));
  out->push_back(static_cast<float>(Slog(len)));
  for (int p = 0; p < 8; ++p) out->push_back(p == pos ? 1.0f : 0.0f);
}

void AppendGpu(const LoopNest& nest, bool is_gpu, std::vector<float>* out) {
  auto first = [&](const std::vector<size_t>& v) {
    return v.empty() ? 1.0 : static_cast<double>(nest.ExtentOr1(v.front()));
  };
  out->push_back(is_gpu ? 1.0f : 0.0f);
  for (const std::vector<size_t>* v : {&nest.block_x, &nest.block_y, &nest.block_z, &nest.thread_x,
                                       &nest.thread_y, &nest.thread_z, &nest.vthread}) {
    out->push_back(static_cast<float>(Slog(is_gpu ? first(*v) : 1.0)));
  }
}

// ---- Group 3: arithmetic intensity curve ----------------------------------

// flops / bytes touched as loops are added from the innermost outward,
// sampled where the flops reach 1/10, 2/10, ... of the total (linear
// interpolation between loop levels).
void AppendCurve(const LoopNest& nest, const std::vector<int64_t>& for_touched_bytes,
                 const ArithOps& ops, std::vector<float>* out) {
  const int n = static_cast<int>(nest.loops.size());
  std::vector<double> memory(static_cast<size_t>(n)), compute;
  for (int i = 0; i < n; ++i) {
    // A level that touches nothing would divide by zero; one byte instead.
    memory[static_cast<size_t>(n - 1 - i)] =
        std::max<double>(1.0, static_cast<double>(for_touched_bytes[static_cast<size_t>(i)]));
  }
  double total = ops.FloatOps() / static_cast<double>(nest.prod);
  for (int i = n - 1; i >= 0; --i) {
    total *= static_cast<double>(nest.ExtentOr1(static_cast<size_t>(i)));
    compute.push_back(total);
  }
  if (total <= 0 || compute.empty()) {
    out->insert(out->end(), kCurveSamples, 0.0f);
    return;
  }
  total = compute.back();
  int p = 0;
  for (int s = 0; s < kCurveSamples; ++s) {
    const double cur = static_cast<double>(s + 1) / kCurveSamples * total;
    while (p < n - 1 && compute[static_cast<size_t>(p)] < cur - 1e-4) ++p;
    double v;
    if (p == 0) {
      v = compute[0] / memory[0];
    } else {
      const size_t q = static_cast<size_t>(p);
      const double base = compute[q - 1] / memory[q - 1];
      const double slope = (compute[q] / memory[q] - base) / (compute[q] - compute[q - 1]);
      v = base + slope * (cur - compute[q - 1]);
    }
    out->push_back(static_cast<float>(Slog(v)));
  }
}

// ---- The walk -------------------------------------------------------------

struct Alloc {
  double size_bytes = 0, prod = 0, outer_prod = 1;
  bool set = false;
};

struct Row {
  const ir::BufferNode* buffer = nullptr;
  std::vector<float> head;  // groups 1-3 of the last store to the buffer
  double outer_prod = 1;
  double num_loops = 0;
  double auto_unroll = 0;
};

bool IsGpuTag(const std::string& tag) {
  return tag.rfind("blockIdx.", 0) == 0 || tag.rfind("threadIdx.", 0) == 0 ||
         tag.rfind("vthread", 0) == 0;
}

class Collector {
 public:
  Collector(const FeatureOptions& options, bool is_gpu) : options_(options), is_gpu_(is_gpu) {}

  void Walk(const ir::Stmt& s) {
    if (!s.defined()) return;
    switch (s.kind()) {
      case ir::StmtKind::kFor: WalkFor(s.as<ir::ForNode>()); return;
      case ir::StmtKind::kBlockRealize: {
        const ir::BlockNode* b = s.as<ir::BlockRealizeNode>()->block.get();
        if (b->init) Walk(*b->init);
        Walk(b->body);
        for (const ir::Buffer& buf : b->alloc_buffers) HandleAlloc(buf);
        return;
      }
      case ir::StmtKind::kBufferStore: Store(s.as<ir::BufferStoreNode>()); return;
      case ir::StmtKind::kSeqStmt:
        for (const ir::Stmt& c : s.as<ir::SeqStmtNode>()->seq) Walk(c);
        return;
      case ir::StmtKind::kIfThenElse:
        Walk(s.as<ir::IfThenElseNode>()->then_case);
        Walk(s.as<ir::IfThenElseNode>()->else_case);
        return;
      case ir::StmtKind::kEvaluate: return;
    }
  }

  void HandleAlloc(const ir::Buffer& buf) {
    double numel = 1;
    for (const ir::Expr& d : buf->shape) {
      int64_t v = 0;
      numel *= (ir::AsConstInt(d, &v) && v > 0) ? static_cast<double>(v) : 1.0;
    }
    Alloc& a = allocs_[buf.get()];
    a.set = true;
    a.size_bytes = numel * buf->dtype.bytes();
    a.prod = numel * static_cast<double>(nest_.prod);
    a.outer_prod = static_cast<double>(nest_.prod);
  }

  FeatureRows Finish() const {
    FeatureRows out;
    out.rows = static_cast<int64_t>(rows_.size());
    out.values.reserve(rows_.size() * kNumFeatures);
    for (const Row& r : rows_) {
      out.values.insert(out.values.end(), r.head.begin(), r.head.end());
      Alloc a;
      if (auto it = allocs_.find(r.buffer); it != allocs_.end()) a = it->second;
      for (double v : {a.size_bytes, a.prod, a.outer_prod, r.outer_prod / a.outer_prod}) {
        out.values.push_back(static_cast<float>(Slog(v)));
      }
      for (double v : {r.outer_prod, r.num_loops, r.auto_unroll}) {
        out.values.push_back(static_cast<float>(Slog(v)));
      }
    }
    return out;
  }

 private:
  void WalkFor(const ir::ForNode* f) {
    int64_t extent = 0;
    if (!ir::AsConstInt(f->extent, &extent) || extent <= 0) extent = 0;
    const size_t idx = nest_.loops.size();
    nest_.loops.push_back(f);
    nest_.extents.push_back(extent);
    if (extent > 0) nest_.prod *= extent;
    bool unroll_pragma = false;
    if (auto it = f->annotations.find(kAutoUnrollMaxStep); it != f->annotations.end()) {
      int64_t v = 0;
      if (ir::AsConstInt(it->second, &v) && v > 0) {
        nest_.auto_unroll.push_back(v);
        unroll_pragma = true;
      }
    }
    std::vector<size_t>* kind = nullptr;
    switch (f->for_kind) {
      case ir::ForKind::kParallel: kind = &nest_.parallel; break;
      case ir::ForKind::kVectorized: kind = &nest_.vectorize; break;
      case ir::ForKind::kUnrolled: kind = &nest_.unroll; break;
      case ir::ForKind::kThreadBinding: {
        const std::string& t = f->thread_tag;
        if (t == "blockIdx.x") kind = &nest_.block_x;
        else if (t == "blockIdx.y") kind = &nest_.block_y;
        else if (t == "blockIdx.z") kind = &nest_.block_z;
        else if (t == "threadIdx.x") kind = &nest_.thread_x;
        else if (t == "threadIdx.y") kind = &nest_.thread_y;
        else if (t == "threadIdx.z") kind = &nest_.thread_z;
        else if (t.rfind("vthread", 0) == 0) kind = &nest_.vthread;
        break;
      }
      case ir::ForKind::kSerial: break;
    }
    if (kind != nullptr) kind->push_back(idx);
    Walk(f->body);
    if (kind != nullptr) kind->pop_back();
    if (unroll_pragma) nest_.auto_unroll.pop_back();
    if (extent > 0) nest_.prod /= extent;
    nest_.extents.pop_back();
    nest_.loops.pop_back();
  }

  void Store(const ir::BufferStoreNode* st) {
    // Stores of constants (initializations) carry no cost signal (TVM).
    const ir::ExprKind vk = st->value.kind();
    if (vk == ir::ExprKind::kIntImm || vk == ir::ExprKind::kFloatImm) return;
    Row* row = nullptr;
    for (Row& r : rows_) {
      if (r.buffer == st->buffer.get()) row = &r;
    }
    if (row == nullptr) {
      rows_.push_back(Row{});
      row = &rows_.back();
      row->buffer = st->buffer.get();
    }
    row->head.clear();
    row->head.reserve(kNumFeatures);
    ArithCounter counter(static_cast<double>(nest_.prod));
    counter.Visit(st->value);
    AppendArith(counter.ops, &row->head);
    AppendForKind(nest_, nest_.vectorize, &row->head);
    AppendForKind(nest_, nest_.unroll, &row->head);
    AppendForKind(nest_, nest_.parallel, &row->head);
    AppendGpu(nest_, is_gpu_, &row->head);
    std::vector<int64_t> for_touched_bytes;
    internal::AppendBufferAccessFeatures(st, nest_, options_.cache_line_bytes, &touched_,
                                         &for_touched_bytes, &row->head);
    AppendCurve(nest_, for_touched_bytes, counter.ops, &row->head);
    row->outer_prod = static_cast<double>(nest_.prod);
    row->num_loops = static_cast<double>(nest_.loops.size());
    row->auto_unroll = nest_.auto_unroll.empty() ? 0.0 : static_cast<double>(nest_.auto_unroll.back());
  }

  const FeatureOptions& options_;
  bool is_gpu_;
  LoopNest nest_;
  internal::TouchedUnderLoop touched_;
  std::vector<Row> rows_;  // in order of the first store to each buffer
  std::unordered_map<const ir::BufferNode*, Alloc> allocs_;
};

bool HasGpuBinding(const ir::Stmt& s) {
  if (!s.defined()) return false;
  switch (s.kind()) {
    case ir::StmtKind::kFor: {
      const auto* f = s.as<ir::ForNode>();
      if (f->for_kind == ir::ForKind::kThreadBinding && IsGpuTag(f->thread_tag)) return true;
      return HasGpuBinding(f->body);
    }
    case ir::StmtKind::kBlockRealize: {
      const ir::BlockNode* b = s.as<ir::BlockRealizeNode>()->block.get();
      return (b->init && HasGpuBinding(*b->init)) || HasGpuBinding(b->body);
    }
    case ir::StmtKind::kSeqStmt:
      for (const ir::Stmt& c : s.as<ir::SeqStmtNode>()->seq) {
        if (HasGpuBinding(c)) return true;
      }
      return false;
    case ir::StmtKind::kIfThenElse:
      return HasGpuBinding(s.as<ir::IfThenElseNode>()->then_case) ||
             HasGpuBinding(s.as<ir::IfThenElseNode>()->else_case);
    default: return false;
  }
}

std::vector<std::string> MakeNames() {
  std::vector<std::string> n;
  for (const char* kind : {"float", "int"}) {
    for (const char* op : {"mad", "add_sub", "mul", "div_mod", "cmp", "math_func", "other_func"}) {
      n.push_back(std::string(kind) + "_" + op);
    }
  }
  n.push_back("bool_op");
  n.push_back("select_op");
  for (const char* kind : {"vec", "unroll", "parallel"}) {
    for (const char* f : {"num", "prod", "len", "pos_none", "pos_inner_spatial",
                          "pos_middle_spatial", "pos_outer_spatial", "pos_inner_reduce",
                          "pos_middle_reduce", "pos_outer_reduce", "pos_mixed"}) {
      n.push_back(std::string(kind) + "_" + f);
    }
  }
  for (const char* f : {"is_gpu", "blockIdx_x_len", "blockIdx_y_len", "blockIdx_z_len",
                        "threadIdx_x_len", "threadIdx_y_len", "threadIdx_z_len", "vthread_len"}) {
    n.push_back(f);
  }
  for (int b = 0; b < internal::kBuffersPerStore; ++b) {
    for (const char* f : {"acc_read", "acc_write", "acc_readwrite", "bytes", "unique_bytes",
                          "lines", "unique_lines", "reuse_loop_multiple_read",
                          "reuse_serial_multiple_read_write", "reuse_none", "reuse_dis_iter",
                          "reuse_dis_bytes", "reuse_ct", "bytes_d_reuse_ct",
                          "unique_bytes_d_reuse_ct", "lines_d_reuse_ct",
                          "unique_lines_d_reuse_ct", "stride"}) {
      n.push_back("B" + std::to_string(b) + "." + f);
    }
  }
  for (int i = 0; i < kCurveSamples; ++i) n.push_back("arith_intensity_" + std::to_string(i));
  for (const char* f : {"alloc_size", "alloc_prod", "alloc_outer_prod", "alloc_inner_prod",
                        "outer_prod", "num_loops", "auto_unroll_max_step"}) {
    n.push_back(f);
  }
  return n;
}

}  // namespace

const std::vector<std::string>& FeatureNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = MakeNames();
    if (n.size() != static_cast<size_t>(kNumFeatures)) throw std::logic_error("feature name count");
    return n;
  }();
  return names;
}

int FeatureIndex(const std::string& name) {
  const std::vector<std::string>& names = FeatureNames();
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) throw std::out_of_range("unknown feature name '" + name + "'");
  return static_cast<int>(it - names.begin());
}

ir::PrimFunc LowerForFeatures(const ir::PrimFunc& scheduled) {
  ir::PrimFunc f = ir::transform::PlanBufferAllocationAtLca(scheduled);
  f = ir::transform::BlocksToLoops(f);
  f = ir::transform::CompactBufferAllocation(f);
  return ir::transform::Simplify(f);
}

FeatureRows ExtractFeatures(const ir::PrimFunc& scheduled, const FeatureOptions& options) {
  const ir::PrimFunc lowered = LowerForFeatures(scheduled);
  const bool is_gpu = options.force_gpu || HasGpuBinding(lowered.body);
  Collector c(options, is_gpu);
  c.Walk(lowered.body);
  for (const ir::Buffer& p : lowered.params) c.HandleAlloc(p);
  return c.Finish();
}

std::vector<FeatureRows> ExtractFeaturesBatch(const std::vector<ir::PrimFunc>& scheduled,
                                              int num_threads, const FeatureOptions& options,
                                              std::vector<std::string>* errors) {
  const size_t n = scheduled.size();
  std::vector<FeatureRows> out(n);
  std::vector<std::string> errs(n);
  // Each result lands at its own index, so the output does not depend on
  // the thread count or on which thread took which program.
  support::ParallelFor(static_cast<int>(n), std::max(num_threads, 1), [&](int i) {
    try {
      out[static_cast<size_t>(i)] = ExtractFeatures(scheduled[static_cast<size_t>(i)], options);
    } catch (const std::exception& e) {
      out[static_cast<size_t>(i)] = FeatureRows{};
      errs[static_cast<size_t>(i)] = e.what();
    }
  });
  if (errors != nullptr) *errors = std::move(errs);
  return out;
}

}  // namespace kiln::cost_model
