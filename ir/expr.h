// Expressions of the Kiln IR: immutable, shared nodes behind a small handle.
//
// Nodes are created once and never modified, so subtrees may be shared freely
// between functions and schedules. Identity matters only for variables (and
// buffers): two VarNodes with the same name are different variables.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/node_alloc.h"

namespace kiln::ir {

class Buffer;
struct BufferNode;

enum class ExprKind : uint8_t {
  kIntImm,
  kFloatImm,
  kStringImm,
  kVar,
  // Binary arithmetic. kDiv is true division for floats and truncating
  // division for integers; kFloorDiv / kFloorMod round toward -infinity.
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,  // truncating remainder (C's %); the text form spells it T.truncmod
  kFloorDiv,
  kFloorMod,
  kMin,
  kMax,
  // Comparisons; result is bool with the operands' lane count.
  kEQ,
  kNE,
  kLT,
  kLE,
  kGT,
  kGE,
  // Logic on bool.
  kAnd,
  kOr,
  kNot,
  kSelect,  // both branches evaluated; see CallOp::kIfThenElse for lazy form
  kCast,
  kBufferLoad,
  kCall,
  kRamp,
  kBroadcast,
};

// True for kAdd..kOr (nodes represented by BinaryNode).
constexpr bool IsBinary(ExprKind k) { return k >= ExprKind::kAdd && k <= ExprKind::kOr; }
constexpr bool IsComparison(ExprKind k) { return k >= ExprKind::kEQ && k <= ExprKind::kGE; }

// The fixed set of intrinsics a Call may name.
enum class CallOp : uint8_t {
  kIfThenElse,  // (cond, then, else): only the taken branch is evaluated
  kExp,
  kExp2,
  kExp10,
  kLog,
  kLog2,
  kLog10,
  kLog1p,
  kSqrt,
  kRsqrt,
  kTanh,
  kSigmoid,
  kPow,
  kFabs,
  kErf,
  kFloor,
  kCeil,
  kRound,
  kTrunc,
  kSin,
  kCos,
  kTan,
  kAtan,
  kIsNan,
  kIsInf,
  kIsFinite,
  kFmod,
  // (scope): a barrier among the threads of a GPU thread block, so that
  // what some threads wrote to memory of that scope ("shared") is seen by
  // the others. Takes a string, returns int32; only GPU lowering makes it.
  kStorageSync,
  // (value, offset, width): the value held by the lane `offset` places
  // further down the caller's segment of `width` lanes of its warp, or the
  // caller's own value where that lane is past the segment (CUDA's
  // __shfl_down_sync). Segments are the aligned groups of `width` lanes,
  // width a power of two up to 32; every lane of the caller's segment must
  // make the same call together. Only GPU lowering makes it.
  kWarpShuffleDown,
  kCount_,  // number of ops; not an op
};

// Name used by the text form after "T." ("exp", "if_then_else", ...).
const char* CallOpName(CallOp op);
// Inverse of CallOpName; false if unknown.
bool CallOpFromName(const std::string& name, CallOp* out);
// Number of arguments the op takes.
int CallOpArity(CallOp op);

struct ExprNode {
  ExprNode(ExprKind k, DataType t) : kind(k), dtype(t) {}
  virtual ~ExprNode() = default;
  const ExprKind kind;
  const DataType dtype;
};

// A handle to an immutable expression node (may be null: !defined()).
class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}

  bool defined() const { return node_ != nullptr; }
  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  const std::shared_ptr<const ExprNode>& node() const { return node_; }
  ExprKind kind() const { return node_->kind; }
  DataType dtype() const { return node_->dtype; }

  // Downcast: returns nullptr if the node is not a T. Every node type says
  // which kinds it takes with a static Matches (Stmt::as in ir/stmt.h too).
  template <typename T>
  const T* as() const {
    return node_ && T::Matches(node_->kind) ? static_cast<const T*>(node_.get()) : nullptr;
  }
  // Pointer identity (same node), not structural equality.
  bool same_as(const Expr& other) const { return node_ == other.node_; }

 private:
  std::shared_ptr<const ExprNode> node_;
};

struct IntImmNode : ExprNode {
  IntImmNode(DataType t, int64_t v) : ExprNode(ExprKind::kIntImm, t), value(v) {}
  static bool Matches(ExprKind k) { return k == ExprKind::kIntImm; }
  const int64_t value;  // bool constants are IntImm of dtype bool (0 or 1)
};

struct FloatImmNode : ExprNode {
  FloatImmNode(DataType t, double v) : ExprNode(ExprKind::kFloatImm, t), value(v) {}
  static bool Matches(ExprKind k) { return k == ExprKind::kFloatImm; }
  const double value;
};

// Strings appear only as annotation / attribute values.
struct StringImmNode : ExprNode {
  explicit StringImmNode(std::string v)
      : ExprNode(ExprKind::kStringImm, DataType::Handle()), value(std::move(v)) {}
  static bool Matches(ExprKind k) { return k == ExprKind::kStringImm; }
  const std::string value;
};

struct VarNode : ExprNode {
  VarNode(std::string n, DataType t) : ExprNode(ExprKind::kVar, t), name(std::move(n)) {}
  static bool Matches(ExprKind k) { return k == ExprKind::kVar; }
  const std::string name;  // a hint for printing; identity is the node itself
};

struct BinaryNode : ExprNode {
  BinaryNode(ExprKind k, DataType t, Expr x, Expr y)
      : ExprNode(k, t), a(std::move(x)), b(std::move(y)) {}
  static bool Matches(ExprKind k) { return IsBinary(k); }
  const Expr a, b;
};

struct NotNode : ExprNode {
  explicit NotNode(Expr x) : ExprNode(ExprKind::kNot, x.dtype()), a(std::move(x)) {}
  static bool Matches(ExprKind k) { return k == ExprKind::kNot; }
  const Expr a;
};

struct SelectNode : ExprNode {
  SelectNode(Expr c, Expr t, Expr f)
      : ExprNode(ExprKind::kSelect, t.dtype()), condition(std::move(c)),
        true_value(std::move(t)), false_value(std::move(f)) {}
  static bool Matches(ExprKind k) { return k == ExprKind::kSelect; }
  const Expr condition, true_value, false_value;
};

struct CastNode : ExprNode {
  CastNode(DataType t, Expr v) : ExprNode(ExprKind::kCast, t), value(std::move(v)) {}
  static bool Matches(ExprKind k) { return k == ExprKind::kCast; }
  const Expr value;
};

struct CallNode : ExprNode {
  CallNode(DataType t, CallOp o, std::vector<Expr> a)
      : ExprNode(ExprKind::kCall, t), op(o), args(std::move(a)) {}
  static bool Matches(ExprKind k) { return k == ExprKind::kCall; }
  const CallOp op;
  const std::vector<Expr> args;
};

struct RampNode : ExprNode {
  RampNode(Expr b, Expr s, int lanes)
      : ExprNode(ExprKind::kRamp, b.dtype().with_lanes(lanes)), base(std::move(b)),
        stride(std::move(s)), lanes(lanes) {}
  static bool Matches(ExprKind k) { return k == ExprKind::kRamp; }
  const Expr base, stride;
  const int lanes;
};

struct BroadcastNode : ExprNode {
  BroadcastNode(Expr v, int lanes)
      : ExprNode(ExprKind::kBroadcast, v.dtype().with_lanes(lanes)), value(std::move(v)),
        lanes(lanes) {}
  static bool Matches(ExprKind k) { return k == ExprKind::kBroadcast; }
  const Expr value;
  const int lanes;
};

// A variable handle. Default-constructed Var is undefined.
class Var : public Expr {
 public:
  Var() = default;
  explicit Var(std::string name, DataType t = DataType::Int32())
      : Expr(MakeNode<VarNode>(std::move(name), t)) {}
  explicit Var(std::shared_ptr<const VarNode> n) : Expr(std::move(n)) {}
  const VarNode* get() const { return static_cast<const VarNode*>(Expr::get()); }
  const VarNode* operator->() const { return get(); }
  const std::string& name() const { return get()->name; }
};

// A half-open interval [min, min + extent).
struct Range {
  Expr min;
  Expr extent;
};

}  // namespace kiln::ir
