#include "ir/buffer.h"

namespace kiln::ir {

Buffer::Buffer(std::string name, DataType dtype, std::vector<Expr> shape, std::string scope,
               std::vector<Expr> strides) {
  auto n = MakeNode<BufferNode>();
  n->name = std::move(name);
  n->dtype = dtype;
  n->shape = std::move(shape);
  n->strides = std::move(strides);
  n->scope = std::move(scope);
  node_ = std::move(n);
}

Buffer Buffer::WithScope(std::string scope) const {
  auto n = MakeNode<BufferNode>(*node_);
  n->scope = std::move(scope);
  return Buffer(std::move(n));
}

Buffer Buffer::WithName(std::string name) const {
  auto n = MakeNode<BufferNode>(*node_);
  n->name = std::move(name);
  return Buffer(std::move(n));
}

}  // namespace kiln::ir
