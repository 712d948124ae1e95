#include "ir/compute/tensor.h"

#include "ir/compute/access_recorder.h"
#include "ir/compute/fold.h"
#include "ir/error.h"
#include "ir/op.h"

namespace kiln::ir::compute {

Expr Tensor::IndexLiteral(int64_t v) { return IndexConst(v); }

Expr Tensor::operator()(std::vector<Expr> indices) const {
  if (!defined()) throw IRError("access to an undefined tensor");
  if (indices.size() != ndim()) {
    throw IRError("tensor " + name() + " has " + std::to_string(ndim()) +
                  " dimension(s) but is indexed with " + std::to_string(indices.size()));
  }
  AccessRecorder::Note(*this);
  return BufferLoad(buffer(), std::move(indices));
}

std::vector<Expr> ShapeExprs(const std::vector<int64_t>& shape) {
  std::vector<Expr> out;
  out.reserve(shape.size());
  for (int64_t d : shape) out.push_back(IndexConst(d));
  return out;
}

Tensor placeholder(std::vector<Expr> shape, DataType dtype, std::string name) {
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!shape[i].defined() || !shape[i].dtype().is_integer() || !shape[i].dtype().is_scalar()) {
      throw IRError("placeholder " + name + ": dimension " + std::to_string(i) +
                    " is not a scalar integer");
    }
  }
  if (!dtype.is_scalar()) throw IRError("placeholder " + name + ": element type must be scalar");
  auto n = MakeNode<TensorNode>();
  n->name = name;
  n->buffer = Buffer(std::move(name), dtype, std::move(shape));
  n->is_placeholder = true;
  return Tensor(std::move(n));
}

Tensor placeholder(const std::vector<int64_t>& shape, DataType dtype, std::string name) {
  return placeholder(ShapeExprs(shape), dtype, std::move(name));
}

Tensor placeholder(std::initializer_list<int64_t> shape, DataType dtype, std::string name) {
  return placeholder(std::vector<int64_t>(shape), dtype, std::move(name));
}

}  // namespace kiln::ir::compute
