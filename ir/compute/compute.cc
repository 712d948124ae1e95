#include "ir/compute/compute.h"

#include "ir/compute/access_recorder.h"
#include "ir/error.h"
#include "ir/functor.h"
#include "ir/op.h"

namespace kiln::ir::compute {

namespace {

// Buffers loaded by an expression in TVM's post-order (indices before the
// load itself, operands left to right), each once.
class LoadCollector : public IRVisitor {
 public:
  std::vector<Buffer> buffers;

 protected:
  void VisitBufferLoad(const BufferLoadNode* op) override {
    IRVisitor::VisitBufferLoad(op);
    for (const auto& b : buffers) {
      if (b.same_as(op->buffer)) return;
    }
    buffers.push_back(op->buffer);
  }
};

Reduce MakeReduce(Reduce::Kind kind, Expr source, std::vector<IterVar> axes, const char* what) {
  if (!source.defined()) throw IRError(std::string(what) + ": undefined source expression");
  if (!source.dtype().is_scalar()) {
    throw IRError(std::string(what) + ": source must be a scalar, got " + source.dtype().str());
  }
  if (axes.empty()) throw IRError(std::string(what) + ": no reduce axes given");
  for (const auto& ax : axes) {
    if (ax.iter_type != IterType::kCommReduce) {
      throw IRError(std::string(what) + ": axis " + ax.var.name() +
                    " is not a reduce axis (make it with reduce_axis)");
    }
  }
  return Reduce{kind, std::move(source), std::move(axes)};
}

}  // namespace

IterVar reduce_axis(Range dom, std::string name) {
  if (!dom.min.defined() || !dom.extent.defined()) {
    throw IRError("reduce_axis " + name + ": undefined range");
  }
  if (!dom.min.dtype().is_integer() || !dom.extent.dtype().is_integer()) {
    throw IRError("reduce_axis " + name + ": range must be integer");
  }
  DataType t =
      dom.extent.dtype().bits() >= dom.min.dtype().bits() ? dom.extent.dtype() : dom.min.dtype();
  return IterVar{Var(std::move(name), t), std::move(dom), IterType::kCommReduce};
}

IterVar reduce_axis(int64_t extent, std::string name) {
  if (extent <= 0) {
    throw IRError("reduce_axis " + name + ": extent must be positive, got " +
                  std::to_string(extent));
  }
  Expr ext = ShapeExprs({extent})[0];
  return reduce_axis(Range{IntImm(0, ext.dtype()), ext}, std::move(name));
}

Reduce sum(Expr source, std::vector<IterVar> axes) {
  return MakeReduce(Reduce::Kind::kSum, std::move(source), std::move(axes), "sum");
}
Reduce max(Expr source, std::vector<IterVar> axes) {
  return MakeReduce(Reduce::Kind::kMax, std::move(source), std::move(axes), "max");
}
Reduce min(Expr source, std::vector<IterVar> axes) {
  return MakeReduce(Reduce::Kind::kMin, std::move(source), std::move(axes), "min");
}

Expr ReduceIdentity(Reduce::Kind kind, DataType t) {
  switch (kind) {
    case Reduce::Kind::kSum:
      return MakeConst(t, 0);
    case Reduce::Kind::kMax:
      return MinValue(t);
    case Reduce::Kind::kMin:
      return MaxValue(t);
  }
  throw IRError("unknown reduction kind");
}

Expr ReduceCombine(Reduce::Kind kind, Expr acc, Expr value) {
  switch (kind) {
    case Reduce::Kind::kSum:
      return Add(std::move(acc), std::move(value));
    case Reduce::Kind::kMax:
      return Max(std::move(acc), std::move(value));
    case Reduce::Kind::kMin:
      return Min(std::move(acc), std::move(value));
  }
  throw IRError("unknown reduction kind");
}

Tensor compute(std::vector<Expr> shape, const ComputeFn& fcompute, std::string name,
               std::vector<std::string> axis_names, Annotations attrs) {
  if (!fcompute) throw IRError("compute " + name + ": no compute function");
  if (!axis_names.empty() && axis_names.size() != shape.size()) {
    throw IRError("compute " + name + ": " + std::to_string(axis_names.size()) +
                  " axis name(s) for a " + std::to_string(shape.size()) + "-d shape");
  }
  auto n = MakeNode<TensorNode>();
  n->name = name;
  n->is_placeholder = false;
  n->attrs = std::move(attrs);
  std::vector<Var> vars;
  for (size_t i = 0; i < shape.size(); ++i) {
    const Expr& extent = shape[i];
    if (!extent.defined() || !extent.dtype().is_integer() || !extent.dtype().is_scalar()) {
      throw IRError("compute " + name + ": dimension " + std::to_string(i) +
                    " is not a scalar integer");
    }
    std::string axis = axis_names.empty() ? "i" + std::to_string(i) : axis_names[i];
    Var v(axis, extent.dtype());
    vars.push_back(v);
    n->axes.push_back(IterVar{v, Range{IntImm(0, extent.dtype()), extent}, IterType::kDataPar});
  }

  AccessRecorder recorder;
  n->body = fcompute(vars);
  Expr value;
  if (const auto* r = std::get_if<Reduce>(&n->body)) {
    value = r->source;
  } else {
    value = std::get<Expr>(n->body);
  }
  if (!value.defined())
    throw IRError("compute " + name + ": the compute function returned nothing");
  if (!value.dtype().is_scalar() || value.dtype().is_handle()) {
    throw IRError("compute " + name + ": body must be a scalar value, got " + value.dtype().str());
  }

  LoadCollector loads;
  loads.VisitExpr(value);
  for (const auto& b : loads.buffers) {
    const Tensor* found = nullptr;
    for (const auto& t : recorder.tensors()) {
      if (t.buffer().same_as(b)) found = &t;
    }
    if (found == nullptr) {
      throw IRError("compute " + name + ": reads buffer " + b.name() +
                    ", which was not accessed through a Tensor inside the compute function");
    }
    n->inputs.push_back(*found);
  }
  n->buffer = Buffer(std::move(name), value.dtype(), std::move(shape));
  return Tensor(std::move(n));
}

Tensor compute(const std::vector<int64_t>& shape, const ComputeFn& fcompute, std::string name,
               std::vector<std::string> axis_names, Annotations attrs) {
  return compute(ShapeExprs(shape), fcompute, std::move(name), std::move(axis_names),
                 std::move(attrs));
}

Tensor compute(std::initializer_list<int64_t> shape, const ComputeFn& fcompute, std::string name,
               std::vector<std::string> axis_names, Annotations attrs) {
  return compute(std::vector<int64_t>(shape), fcompute, std::move(name), std::move(axis_names),
                 std::move(attrs));
}

}  // namespace kiln::ir::compute
