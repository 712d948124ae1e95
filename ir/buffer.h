// Buffers: named, typed, shaped storage, and loads from them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/expr.h"

namespace kiln::ir {

struct BufferNode {
  std::string name;          // a hint for printing; identity is the node itself
  DataType dtype;            // element type (scalar)
  std::vector<Expr> shape;   // one extent per dimension
  std::vector<Expr> strides; // empty: compact row-major
  std::string scope = "global";  // "global", "shared", "local", "shared.dyn", ...
  int64_t align = 0;         // data alignment in bytes; 0 = default
};

// A handle to an immutable buffer node. Buffers compare by identity.
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::shared_ptr<const BufferNode> n) : node_(std::move(n)) {}
  Buffer(std::string name, DataType dtype, std::vector<Expr> shape,
         std::string scope = "global", std::vector<Expr> strides = {});

  bool defined() const { return node_ != nullptr; }
  const BufferNode* get() const { return node_.get(); }
  const BufferNode* operator->() const { return node_.get(); }
  const std::shared_ptr<const BufferNode>& node() const { return node_; }
  bool same_as(const Buffer& other) const { return node_ == other.node_; }
  bool operator==(const Buffer& other) const { return node_ == other.node_; }

  const std::string& name() const { return node_->name; }
  DataType dtype() const { return node_->dtype; }
  const std::vector<Expr>& shape() const { return node_->shape; }
  size_t ndim() const { return node_->shape.size(); }
  const std::string& scope() const { return node_->scope; }

  // A new buffer (new identity) equal to this one but with another field.
  Buffer WithScope(std::string scope) const;
  Buffer WithName(std::string name) const;

 private:
  std::shared_ptr<const BufferNode> node_;
};

// Reads one element (or, with a Ramp index, a vector) of a buffer.
struct BufferLoadNode : ExprNode {
  BufferLoadNode(DataType t, Buffer b, std::vector<Expr> idx)
      : ExprNode(ExprKind::kBufferLoad, t), buffer(std::move(b)), indices(std::move(idx)) {}
  static bool Matches(ExprKind k) { return k == ExprKind::kBufferLoad; }
  const Buffer buffer;
  const std::vector<Expr> indices;
};

// A rectangular sub-region of a buffer: one Range per dimension.
struct BufferRegion {
  Buffer buffer;
  std::vector<Range> region;
};

}  // namespace kiln::ir
