#include "ir/compute/create_prim_func.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ir/compute/compute.h"
#include "ir/error.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/structural_equal.h"

namespace kiln::ir::compute {

namespace {

// Hands out "name", "name_1", "name_2", ... (TVM's NameSupply::FreshName).
class NameSupply {
 public:
  std::string Fresh(const std::string& base) {
    if (used_.insert(base).second) return base;
    for (int i = 1;; ++i) {
      std::string candidate = base + "_" + std::to_string(i);
      if (used_.insert(candidate).second) return candidate;
    }
  }

 private:
  std::set<std::string> used_;
};

// Replaces the stage's axis variables by block variables and tensor buffers
// by the function's (renamed) buffers.
class StageRewriter : public IRMutator {
 public:
  StageRewriter(const std::unordered_map<const VarNode*, Expr>& vars,
                const std::unordered_map<const BufferNode*, Buffer>& buffers)
      : vars_(vars), buffers_(buffers) {}

 protected:
  Expr VisitVar(const Expr& e, const VarNode* op) override {
    auto it = vars_.find(op);
    return it == vars_.end() ? e : it->second;
  }
  Buffer VisitBuffer(const Buffer& b) override {
    auto it = buffers_.find(b.get());
    return it == buffers_.end() ? b : it->second;
  }

 private:
  const std::unordered_map<const VarNode*, Expr>& vars_;
  const std::unordered_map<const BufferNode*, Buffer>& buffers_;
};

class VarCollector : public IRVisitor {
 public:
  std::vector<const VarNode*> vars;

 protected:
  void VisitVar(const VarNode* op) override {
    if (std::find(vars.begin(), vars.end(), op) == vars.end()) vars.push_back(op);
  }
};

// The accesses of one block in order of first appearance (TVM's
// BlockReadWriteDetector without loops inside the block).
class AccessCollector : public IRVisitor {
 public:
  struct Access {
    Buffer buffer;
    std::vector<std::vector<Expr>> points;  // distinct index tuples
  };
  std::vector<Access> reads, writes;

 protected:
  void VisitBufferLoad(const BufferLoadNode* op) override {
    Note(&reads, op->buffer, op->indices);
    IRVisitor::VisitBufferLoad(op);
  }
  void VisitBufferStore(const BufferStoreNode* op) override {
    Note(&writes, op->buffer, op->indices);
    IRVisitor::VisitBufferStore(op);
  }

 private:
  static void Note(std::vector<Access>* list, const Buffer& b, const std::vector<Expr>& idx) {
    for (auto& acc : *list) {
      if (!acc.buffer.same_as(b)) continue;
      for (const auto& p : acc.points) {
        bool same = true;
        for (size_t i = 0; i < p.size() && same; ++i) same = StructuralEqual(p[i], idx[i]);
        if (same) return;
      }
      acc.points.push_back(idx);
      return;
    }
    list->push_back(Access{b, {idx}});
  }
};

BufferRegion RegionOf(const AccessCollector::Access& acc) {
  BufferRegion region{acc.buffer, {}};
  for (size_t d = 0; d < acc.buffer.ndim(); ++d) {
    const Expr& first = acc.points[0][d];
    bool single = true;
    for (const auto& p : acc.points) single = single && StructuralEqual(p[d], first);
    if (single) {
      region.region.push_back(Range{first, IntImm(1, first.dtype())});
    } else {
      const Expr& extent = acc.buffer.shape()[d];
      region.region.push_back(Range{IntImm(0, extent.dtype()), extent});
    }
  }
  return region;
}

Expr ToType(DataType t, const Expr& e) {
  if (e.dtype() == t) return e;
  int64_t v;
  if (AsConstInt(e, &v)) return IntImm(v, t);
  return Cast(t, e);
}

struct Builder {
  NameSupply block_names;
  std::unordered_map<const BufferNode*, Buffer> buffer_map;

  Stmt Stage(const Tensor& t) {
    const TensorNode& op = *t.get();
    std::vector<IterVar> axes = op.axes;
    const Reduce* reduce = std::get_if<Reduce>(&op.body);
    if (reduce != nullptr) axes.insert(axes.end(), reduce->axes.begin(), reduce->axes.end());

    std::unordered_set<const VarNode*> axis_vars;
    for (const auto& ax : axes) {
      if (!axis_vars.insert(ax.var.get()).second) {
        throw IRError("compute " + op.name + ": axis " + ax.var.name() + " is used twice");
      }
    }
    std::unordered_map<const VarNode*, Expr> var_map;
    std::vector<Var> loop_vars;
    std::vector<IterVar> iter_vars;
    std::vector<Expr> store_indices;
    for (const auto& ax : axes) {
      VarCollector dom_vars;
      dom_vars.VisitExpr(ax.dom.min);
      dom_vars.VisitExpr(ax.dom.extent);
      for (const VarNode* v : dom_vars.vars) {
        if (axis_vars.count(v)) {
          throw IRError("compute " + op.name + ": the range of axis " + ax.var.name() +
                        " depends on axis " + v->name +
                        "; axis ranges must not depend on other axes of the stage");
        }
      }
      int bits = std::max(ax.dom.min.dtype().bits(), ax.dom.extent.dtype().bits());
      DataType index_type = DataType::Int(bits);
      Var loop_var(ax.var.name(), index_type);
      Var block_var("v_" + ax.var.name(), index_type);
      Range dom{ToType(index_type, ax.dom.min), ToType(index_type, ax.dom.extent)};
      loop_vars.push_back(loop_var);
      iter_vars.push_back(IterVar{block_var, dom, ax.iter_type});
      var_map[ax.var.get()] = ToType(ax.var.dtype(), block_var);
      if (ax.iter_type != IterType::kCommReduce) store_indices.push_back(block_var);
    }
    std::vector<Expr> bindings(loop_vars.begin(), loop_vars.end());
    if (iter_vars.empty()) {
      // A 0-d output still needs one block var (TVM adds a dummy "vi").
      iter_vars.push_back(
          IterVar{Var("vi", DataType::Int32()), Range{IntImm(0), IntImm(1)}, IterType::kDataPar});
      bindings.push_back(IntImm(0));
    }

    StageRewriter rewriter(var_map, buffer_map);
    const Buffer& out = buffer_map.at(t.buffer().get());
    Expr value = rewriter.VisitExpr(reduce != nullptr ? reduce->source : std::get<Expr>(op.body));
    VarCollector used;
    used.VisitExpr(value);
    for (const VarNode* v : used.vars) {
      bool known = false;
      for (const auto& iv : iter_vars) known = known || iv.var.get() == v;
      if (!known) {
        throw IRError("compute " + op.name + ": uses variable " + v->name +
                      ", which is not one of its axes (a reduce axis missing from the "
                      "reducer's axis list?)");
      }
    }

    BlockNode block;
    block.name = block_names.Fresh(op.name);
    block.iter_vars = iter_vars;
    if (reduce != nullptr) {
      block.init = BufferStore(out, ReduceIdentity(reduce->kind, out.dtype()), store_indices);
      Expr acc = BufferLoad(out, store_indices);
      block.body = BufferStore(out, ReduceCombine(reduce->kind, acc, value), store_indices);
    } else {
      block.body = BufferStore(out, value, store_indices);
    }
    AccessCollector access;
    if (block.init) access.VisitStmt(*block.init);
    access.VisitStmt(block.body);
    for (const auto& w : access.writes) block.writes.push_back(RegionOf(w));
    for (const auto& r : access.reads) {
      bool written = false;
      for (const auto& w : access.writes) written = written || w.buffer.same_as(r.buffer);
      if (block.init && written) continue;
      block.reads.push_back(RegionOf(r));
    }
    block.annotations = op.attrs;

    Stmt body = BlockRealize(bindings, BoolImm(true), MakeBlock(std::move(block)));
    for (size_t i = loop_vars.size(); i > 0; --i) {
      const IterVar& iv = iter_vars[i - 1];
      body = For(loop_vars[i - 1], iv.dom.min, iv.dom.extent, ForKind::kSerial, body);
    }
    return body;
  }
};

bool Contains(const std::vector<Tensor>& list, const Tensor& t) {
  return std::any_of(list.begin(), list.end(), [&](const Tensor& x) { return x.same_as(t); });
}

void PostDfs(const Tensor& t, const std::vector<Tensor>& args, std::vector<Tensor>* visited,
             std::vector<Tensor>* order, const std::string& reader) {
  if (Contains(*visited, t)) return;
  if (t.is_placeholder() && !Contains(args, t)) {
    throw IRError("CreatePrimFunc: placeholder " + t.name() + " is read by " + reader +
                  " but is not among the function arguments");
  }
  visited->push_back(t);
  for (const auto& in : t->inputs) PostDfs(in, args, visited, order, t.name());
  order->push_back(t);
}

}  // namespace

PrimFunc CreatePrimFunc(const std::vector<Tensor>& args) {
  if (args.empty()) throw IRError("CreatePrimFunc: no arguments");
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].defined()) {
      throw IRError("CreatePrimFunc: argument " + std::to_string(i) + " is undefined");
    }
    for (size_t j = 0; j < i; ++j) {
      if (args[j].same_as(args[i])) {
        throw IRError("CreatePrimFunc: tensor " + args[i].name() + " is passed twice");
      }
    }
  }
  std::vector<Tensor> visited, order;
  for (const auto& a : args) PostDfs(a, args, &visited, &order, "the argument list");

  Builder builder;
  NameSupply buffer_names;
  auto bind = [&](const Tensor& t) {
    std::string name = buffer_names.Fresh(t.buffer().name());
    builder.buffer_map[t.buffer().get()] =
        name == t.buffer().name() ? t.buffer() : t.buffer().WithName(name);
  };
  PrimFunc func;
  for (const auto& a : args) {
    bind(a);
    func.params.push_back(builder.buffer_map.at(a.buffer().get()));
  }
  std::vector<Buffer> allocs;
  std::vector<Stmt> stages;
  for (const auto& t : order) {
    if (t.is_placeholder()) continue;
    if (!Contains(args, t)) {
      bind(t);
      allocs.push_back(builder.buffer_map.at(t.buffer().get()));
    }
    stages.push_back(builder.Stage(t));
  }
  if (stages.empty()) throw IRError("CreatePrimFunc: the arguments contain no compute stage");
  func.body = MakeRootBody(SeqStmt(std::move(stages)), std::move(allocs));
  func.attrs["tir.noalias"] = BoolImm(true);
  return func;
}

}  // namespace kiln::ir::compute
