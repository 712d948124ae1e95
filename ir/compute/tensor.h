// Tensors of the TE-like compute frontend (modelled on TVM's te.Tensor).
//
// A Tensor is either a placeholder (a function input) or the output of one
// compute stage. Each tensor owns the Buffer that CreatePrimFunc uses for it,
// so `T(i, j)` is directly a BufferLoad of that buffer; the stage graph is
// recorded in TensorNode::inputs.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "ir/buffer.h"
#include "ir/expr.h"
#include "ir/stmt.h"

namespace kiln::ir::compute {

// A commutative reduction over some reduce axes, the top-level body of a
// reduction stage (TVM's tir.Reduce with a sum / max / min combiner).
struct Reduce {
  enum class Kind : uint8_t { kSum, kMax, kMin };
  Kind kind = Kind::kSum;
  Expr source;
  std::vector<IterVar> axes;  // each of iter type kCommReduce
};

// What a compute stage computes at one point: a plain value or a reduction.
using Body = std::variant<Expr, Reduce>;

class Tensor;

struct TensorNode {
  std::string name;
  Buffer buffer;
  bool is_placeholder = true;
  // Compute stages only:
  std::vector<IterVar> axes;   // spatial axes, one per output dimension
  Body body;                   // in terms of axes[i].var and the reduce axes
  Annotations attrs;           // become the block's annotations
  std::vector<Tensor> inputs;  // tensors the body reads, in first-access order
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<const TensorNode> n) : node_(std::move(n)) {}

  bool defined() const { return node_ != nullptr; }
  const TensorNode* get() const { return node_.get(); }
  const TensorNode* operator->() const { return node_.get(); }
  bool same_as(const Tensor& other) const { return node_ == other.node_; }

  const std::string& name() const { return node_->name; }
  const Buffer& buffer() const { return node_->buffer; }
  DataType dtype() const { return node_->buffer.dtype(); }
  const std::vector<Expr>& shape() const { return node_->buffer.shape(); }
  size_t ndim() const { return node_->buffer.ndim(); }
  bool is_placeholder() const { return node_->is_placeholder; }

  // Element access: a BufferLoad of this tensor's buffer. Indices are Exprs
  // (Vars included) or integer literals.
  Expr operator()(std::vector<Expr> indices) const;
  template <typename... Idx>
  Expr operator()(const Idx&... idx) const {
    return (*this)(std::vector<Expr>{ToIndex(idx)...});
  }

 private:
  static Expr ToIndex(const Expr& e) { return e; }
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I>>>
  static Expr ToIndex(I v) {
    return IndexLiteral(static_cast<int64_t>(v));
  }
  static Expr IndexLiteral(int64_t v);

  std::shared_ptr<const TensorNode> node_;
};

// A function input of the given shape (TVM: te.placeholder; default name
// "placeholder" as there).
Tensor placeholder(std::vector<Expr> shape, DataType dtype = DataType::Float32(),
                   std::string name = "placeholder");
Tensor placeholder(const std::vector<int64_t>& shape, DataType dtype = DataType::Float32(),
                   std::string name = "placeholder");
// Makes `placeholder({4}, ...)` unambiguous.
Tensor placeholder(std::initializer_list<int64_t> shape, DataType dtype = DataType::Float32(),
                   std::string name = "placeholder");

// Converts constant extents to index expressions (int32 when they fit).
std::vector<Expr> ShapeExprs(const std::vector<int64_t>& shape);

}  // namespace kiln::ir::compute
