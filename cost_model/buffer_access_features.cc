#include "cost_model/buffer_access_features.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <unordered_set>

#include "ir/arith/const_int_bound.h"
#include "ir/op.h"

namespace kiln::cost_model::internal {
namespace {

using ir::arith::ConstIntBound;
using ir::arith::ConstIntBoundAnalyzer;
using MultiIndex = std::vector<ir::Expr>;

enum class Access { kRead = 0, kWrite = 1, kReadWrite = 2 };
enum class Reuse { kLoopMultipleRead = 0, kSerialMultipleReadWrite = 1, kNoReuse = 2 };

struct BufferAccess {
  const ir::BufferNode* buffer = nullptr;
  Access access = Access::kRead;
  std::vector<MultiIndex> indices;  // the store's and the loads' (see Collect)
  int order = 0;                    // first appearance, for a deterministic tie-break
  // Filled by the steps below.
  std::vector<int64_t> numel_under_loop;  // per loop: elements touched in one iteration
  std::vector<int64_t> access_shape;      // per dim, under the outermost loop
  int64_t continuous_bytes = 1;
  int64_t min_stride = 0, innermost_stride = 0, prod_non_strided = 1;
  Reuse reuse = Reuse::kNoReuse;
  double reuse_dis_iter = 0, reuse_dis_bytes = 0;
  int64_t reuse_ct = 0;
  double bytes = 0, unique_bytes = 0, lines = 0, unique_lines = 0;
};

int64_t ConstOr1(const ir::Expr& e) {
  int64_t v = 0;
  return ir::AsConstInt(e, &v) && v > 0 ? v : 1;
}

// The buffers the store writes and its value reads, in order of appearance.
// A buffer both written and read is "readwrite" and keeps only the store's
// indices plus the loads seen before it became readwrite (as TVM does).
std::vector<BufferAccess> Collect(const ir::BufferStoreNode* store, int n_loops) {
  std::vector<BufferAccess> out;
  auto find = [&](const ir::BufferNode* b) -> BufferAccess* {
    for (BufferAccess& a : out) {
      if (a.buffer == b) return &a;
    }
    return nullptr;
  };
  out.push_back(BufferAccess{});
  out.back().buffer = store->buffer.get();
  out.back().access = Access::kWrite;
  out.back().indices.push_back(store->indices);
  // Post-order walk of the value, like TVM's PostOrderVisit.
  auto visit = [&](auto&& self, const ir::Expr& e) -> void {
    if (!e.defined()) return;
    switch (e.kind()) {
      case ir::ExprKind::kBufferLoad: {
        const auto* load = e.as<ir::BufferLoadNode>();
        for (const ir::Expr& i : load->indices) self(self, i);
        BufferAccess* a = find(load->buffer.get());
        if (a == nullptr) {
          out.push_back(BufferAccess{});
          a = &out.back();
          a->buffer = load->buffer.get();
          a->access = Access::kRead;
          a->order = static_cast<int>(out.size()) - 1;
        } else if (a->access == Access::kWrite) {
          a->access = Access::kReadWrite;
        }
        if (a->access != Access::kReadWrite) a->indices.push_back(load->indices);
        return;
      }
      case ir::ExprKind::kNot: self(self, e.as<ir::NotNode>()->a); return;
      case ir::ExprKind::kSelect: {
        const auto* s = e.as<ir::SelectNode>();
        self(self, s->condition);
        self(self, s->true_value);
        self(self, s->false_value);
        return;
      }
      case ir::ExprKind::kCast: self(self, e.as<ir::CastNode>()->value); return;
      case ir::ExprKind::kCall:
        for (const ir::Expr& a : e.as<ir::CallNode>()->args) self(self, a);
        return;
      case ir::ExprKind::kRamp:
        self(self, e.as<ir::RampNode>()->base);
        self(self, e.as<ir::RampNode>()->stride);
        return;
      case ir::ExprKind::kBroadcast: self(self, e.as<ir::BroadcastNode>()->value); return;
      default:
        if (const auto* b = e.as<ir::BinaryNode>()) {
          self(self, b->a);
          self(self, b->b);
        }
        return;
    }
  };
  visit(visit, store->value);
  for (BufferAccess& a : out) a.numel_under_loop.assign(static_cast<size_t>(n_loops), 0);
  return out;
}

// Per dimension, the union of the constant bounds of every index pattern
// under the analyzer's current variable bounds; *numel is the box's size.
std::vector<int64_t> RelaxAndUnion(const std::vector<MultiIndex>& indices, int64_t* numel,
                                   const ConstIntBoundAnalyzer& an) {
  *numel = 1;
  if (indices.empty()) return {};
  const size_t ndim = indices[0].size();
  std::vector<int64_t> shape(ndim, 0);
  for (size_t d = 0; d < ndim; ++d) {
    int64_t lo = ConstIntBound::kPosInf, hi = ConstIntBound::kNegInf;
    for (const MultiIndex& idx : indices) {
      const ConstIntBound b = an(idx[d]);
      lo = std::min(lo, b.min_value);
      hi = std::max(hi, b.max_value);
    }
    // Unbounded indices (not expected after lowering) count as one element
    // rather than overflowing.
    const int64_t extent = (lo == ConstIntBound::kNegInf || hi == ConstIntBound::kPosInf)
                               ? 1
                               : hi - lo + 1;
    shape[d] = extent;
    *numel *= extent;
  }
  return shape;
}

// TVM's coefficient heuristic for `var` in one index expression, walked in
// post-order: a lone var is 1; var under `* c` (before any add) is c; var
// under an add (before any multiply) is 1; an expression without var is 0.
int64_t Coefficient(const ir::Expr& index, const ir::VarNode* var) {
  bool visited_var = false, visited_add = false, visited_mul = false;
  int64_t stride = 0;
  auto visit = [&](auto&& self, const ir::Expr& e) -> void {
    if (!e.defined()) return;
    if (const auto* b = e.as<ir::BinaryNode>()) {
      self(self, b->a);
      self(self, b->b);
      if (e.kind() == ir::ExprKind::kMul && visited_var && !visited_add) {
        if (const auto* c = b->a.as<ir::IntImmNode>()) {
          visited_mul = true;
          stride = c->value;
        } else if (const auto* c2 = b->b.as<ir::IntImmNode>()) {
          visited_mul = true;
          stride = c2->value;
        }
      } else if (e.kind() == ir::ExprKind::kAdd && visited_var && !visited_mul) {
        visited_add = true;
        stride = 1;
      }
      return;
    }
    switch (e.kind()) {
      case ir::ExprKind::kVar:
        if (e.get() == var) {
          visited_var = true;
          stride = 2;
        }
        return;
      case ir::ExprKind::kNot: self(self, e.as<ir::NotNode>()->a); return;
      case ir::ExprKind::kSelect: {
        const auto* s = e.as<ir::SelectNode>();
        self(self, s->condition);
        self(self, s->true_value);
        self(self, s->false_value);
        return;
      }
      case ir::ExprKind::kCast: self(self, e.as<ir::CastNode>()->value); return;
      case ir::ExprKind::kCall:
        for (const ir::Expr& a : e.as<ir::CallNode>()->args) self(self, a);
        return;
      case ir::ExprKind::kBufferLoad:
        for (const ir::Expr& a : e.as<ir::BufferLoadNode>()->indices) self(self, a);
        return;
      default: return;
    }
  };
  visit(visit, index);
  if (!visited_var) return 0;
  return (!visited_mul && !visited_add) ? 1 : stride;
}

// The smallest |coefficient| × dimension stride of var over the index
// patterns, taking in each pattern the innermost dimension var appears in;
// 0 when var appears nowhere.
int64_t VarStride(const std::vector<MultiIndex>& indices, const std::vector<int64_t>& dim_stride,
                  const ir::VarNode* var) {
  constexpr int64_t kNotFound = std::numeric_limits<int64_t>::max();
  int64_t result = kNotFound;
  for (const MultiIndex& idx : indices) {
    for (size_t d = idx.size(); d-- > 0;) {
      const int64_t c = Coefficient(idx[d], var);
      if (c != 0) {
        result = std::min(result, std::abs(c) * dim_stride[d]);
        break;
      }
    }
  }
  return result == kNotFound ? 0 : result;
}

void CollectVars(const ir::Expr& e, std::unordered_set<const ir::VarNode*>* vars) {
  if (!e.defined()) return;
  if (e.kind() == ir::ExprKind::kVar) {
    vars->insert(static_cast<const ir::VarNode*>(e.get()));
    return;
  }
  if (const auto* b = e.as<ir::BinaryNode>()) {
    CollectVars(b->a, vars);
    CollectVars(b->b, vars);
  } else if (const auto* n = e.as<ir::NotNode>()) {
    CollectVars(n->a, vars);
  } else if (const auto* s = e.as<ir::SelectNode>()) {
    CollectVars(s->condition, vars);
    CollectVars(s->true_value, vars);
    CollectVars(s->false_value, vars);
  } else if (const auto* c = e.as<ir::CastNode>()) {
    CollectVars(c->value, vars);
  } else if (const auto* call = e.as<ir::CallNode>()) {
    for (const ir::Expr& a : call->args) CollectVars(a, vars);
  } else if (const auto* l = e.as<ir::BufferLoadNode>()) {
    for (const ir::Expr& a : l->indices) CollectVars(a, vars);
  }
}

int64_t SumBytes(const std::unordered_map<const ir::BufferNode*, std::vector<int64_t>>& m) {
  int64_t total = 0;
  for (const auto& [buffer, numels] : m) {
    total += std::accumulate(numels.begin(), numels.end(), int64_t{0}) * buffer->dtype.bytes();
  }
  return total;
}

}  // namespace

void AppendBufferAccessFeatures(const ir::BufferStoreNode* store, const LoopNest& nest,
                                int cache_line_bytes, TouchedUnderLoop* touched,
                                std::vector<int64_t>* for_touched_bytes, std::vector<float>* out) {
  const int n_loops = static_cast<int>(nest.loops.size());
  std::vector<BufferAccess> subs = Collect(store, n_loops);

  // Regions: loops bound to their first value, then released from the
  // innermost outward; after each release, the box each buffer's patterns
  // cover is what one iteration of that loop touches.
  for_touched_bytes->assign(static_cast<size_t>(n_loops), 0);
  ConstIntBoundAnalyzer an;
  for (const ir::ForNode* loop : nest.loops) an.Bind(loop->loop_var, ir::Range{loop->min, ir::IntImm(1, loop->min.dtype())});
  if (n_loops == 0) {
    for (BufferAccess& s : subs) s.access_shape.assign(s.buffer->shape.size(), 1);
  }
  for (int i = n_loops - 1; i >= 0; --i) {
    const ir::ForNode* loop = nest.loops[static_cast<size_t>(i)];
    an.Bind(loop->loop_var, ir::Range{loop->min, loop->extent});
    int64_t& bytes = (*for_touched_bytes)[static_cast<size_t>(i)];
    for (BufferAccess& s : subs) {
      int64_t numel = 0;
      s.access_shape = RelaxAndUnion(s.indices, &numel, an);
      numel = std::max<int64_t>(0, numel);
      s.numel_under_loop[static_cast<size_t>(i)] = numel;
      bytes += numel * s.buffer->dtype.bytes();
      (*touched)[loop][s.buffer].push_back(numel);
    }
  }

  // Strides, from the innermost loop outward: the first loop whose variable
  // moves through a buffer gives its minimal stride in elements.
  for (BufferAccess& s : subs) {
    const size_t ndim = s.buffer->shape.size();
    std::vector<int64_t> shape(ndim), dim_stride(ndim);
    for (size_t d = 0; d < ndim; ++d) shape[d] = ConstOr1(s.buffer->shape[d]);
    if (ndim > 0) {
      dim_stride[ndim - 1] = 1;
      for (size_t d = ndim - 1; d-- > 0;) dim_stride[d] = dim_stride[d + 1] * shape[d + 1];
    }
    s.continuous_bytes = 1;
    for (size_t d = ndim; d-- > 0;) {
      if (d < s.access_shape.size() && s.access_shape[d] == shape[d]) {
        s.continuous_bytes = shape[d] * s.buffer->dtype.bytes();
        break;
      }
    }
    int i = n_loops - 1;
    s.min_stride = 0;
    for (; i >= 0; --i) {
      s.min_stride = VarStride(s.indices, dim_stride, nest.loops[static_cast<size_t>(i)]->loop_var.get());
      if (s.min_stride != 0) break;
    }
    s.innermost_stride = (i == n_loops - 1) ? s.min_stride : 0;
    s.prod_non_strided = 1;
    for (int j = n_loops - 1; j > i; --j) s.prod_non_strided *= nest.ExtentOr1(static_cast<size_t>(j));
  }

  // Reuse: the innermost loop that either does not move a buffer's indices
  // (each iteration reads the same data again) or holds a second store that
  // touches it (serial reuse).
  int64_t top_loop_touch_bytes = 0;
  if (n_loops > 0) {
    // TVM sums one element per buffer here (its per-loop maps hold one key).
    for (const BufferAccess& s : subs) top_loop_touch_bytes += s.buffer->dtype.bytes();
  }
  for (BufferAccess& s : subs) {
    std::unordered_set<const ir::VarNode*> region_vars;
    for (const MultiIndex& idx : s.indices) {
      for (const ir::Expr& e : idx) CollectVars(e, &region_vars);
    }
    for (int i = n_loops - 1; i >= 0; --i) {
      const ir::ForNode* loop = nest.loops[static_cast<size_t>(i)];
      if (!region_vars.count(loop->loop_var.get())) {
        s.reuse = Reuse::kLoopMultipleRead;
        s.reuse_ct = nest.ExtentOr1(static_cast<size_t>(i));
        s.reuse_dis_iter = 1;
        for (int j = n_loops - 1; j > i; --j) s.reuse_dis_iter *= static_cast<double>(nest.ExtentOr1(static_cast<size_t>(j)));
        s.reuse_dis_bytes = (i == n_loops - 1)
                                ? static_cast<double>(top_loop_touch_bytes)
                                : static_cast<double>(SumBytes(touched->at(nest.loops[static_cast<size_t>(i) + 1])));
        break;
      }
      const auto& under = touched->at(loop);
      const std::vector<int64_t>& counts = under.at(s.buffer);
      if (counts.size() >= 2) {
        const double extent = static_cast<double>(nest.ExtentOr1(static_cast<size_t>(i)));
        s.reuse = Reuse::kSerialMultipleReadWrite;
        s.reuse_ct = static_cast<int64_t>(counts.size()) - 1;
        s.reuse_dis_iter = static_cast<double>(*std::min_element(counts.begin(), counts.end())) / extent;
        s.reuse_dis_bytes = static_cast<double>(SumBytes(under)) / extent;
        break;
      }
    }
  }

  // Bytes and cache lines.
  for (BufferAccess& s : subs) {
    const double dtype_bytes = s.buffer->dtype.bytes();
    s.bytes = dtype_bytes * static_cast<double>(nest.prod);
    if (n_loops == 0) {
      s.unique_bytes = s.lines = s.unique_lines = 1;
    } else {
      s.unique_bytes = static_cast<double>(s.numel_under_loop.front()) * dtype_bytes;
      s.lines = static_cast<double>(nest.prod) / static_cast<double>(s.prod_non_strided) *
                std::min(1.0, static_cast<double>(s.min_stride) * dtype_bytes / cache_line_bytes);
      s.lines = std::max(1.0, s.lines);
      s.unique_lines = s.unique_bytes /
                       static_cast<double>(std::min<int64_t>(cache_line_bytes, s.continuous_bytes));
      s.unique_lines = std::max(1.0, s.unique_lines);
    }
  }

  // The buffers with the most cache lines first (then bytes, then name; TVM
  // stops there, the first appearance breaks the remaining ties).
  std::stable_sort(subs.begin(), subs.end(), [](const BufferAccess& a, const BufferAccess& b) {
    if (a.lines != b.lines) return a.lines > b.lines;
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    if (a.buffer->name != b.buffer->name) return a.buffer->name < b.buffer->name;
    return a.order < b.order;
  });
  for (int k = 0; k < kBuffersPerStore; ++k) {
    if (k >= static_cast<int>(subs.size())) {
      out->insert(out->end(), kBufferFeatures, 0.0f);
      continue;
    }
    const BufferAccess& s = subs[static_cast<size_t>(k)];
    const double proxy_ct = s.reuse_ct > 0 ? static_cast<double>(s.reuse_ct) : 0.5;
    const double vs[kBufferFeatures] = {
        s.access == Access::kRead ? 1.0 : 0.0,
        s.access == Access::kWrite ? 1.0 : 0.0,
        s.access == Access::kReadWrite ? 1.0 : 0.0,
        Slog(s.bytes),
        Slog(s.unique_bytes),
        Slog(s.lines),
        Slog(s.unique_lines),
        s.reuse == Reuse::kLoopMultipleRead ? 1.0 : 0.0,
        s.reuse == Reuse::kSerialMultipleReadWrite ? 1.0 : 0.0,
        s.reuse == Reuse::kNoReuse ? 1.0 : 0.0,
        Slog(s.reuse_dis_iter),
        Slog(s.reuse_dis_bytes),
        Slog(static_cast<double>(s.reuse_ct)),
        Slog(s.bytes / proxy_ct),
        Slog(s.unique_bytes / proxy_ct),
        Slog(s.lines / proxy_ct),
        Slog(s.unique_lines / proxy_ct),
        Slog(static_cast<double>(s.innermost_stride)),
    };
    for (double v : vs) out->push_back(static_cast<float>(v));
  }
}

}  // namespace kiln::cost_model::internal
