#include "ir/op.h"

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "ir/error.h"

namespace kiln::ir {

namespace {

const char* KindSymbol(ExprKind k) {
  switch (k) {
    case ExprKind::kAdd: return "+";
    case ExprKind::kSub: return "-";
    case ExprKind::kMul: return "*";
    case ExprKind::kDiv: return "/";
    case ExprKind::kMod: return "truncmod";
    case ExprKind::kFloorDiv: return "//";
    case ExprKind::kFloorMod: return "%";
    case ExprKind::kMin: return "min";
    case ExprKind::kMax: return "max";
    case ExprKind::kEQ: return "==";
    case ExprKind::kNE: return "!=";
    case ExprKind::kLT: return "<";
    case ExprKind::kLE: return "<=";
    case ExprKind::kGT: return ">";
    case ExprKind::kGE: return ">=";
    case ExprKind::kAnd: return "and";
    case ExprKind::kOr: return "or";
    default: return "?";
  }
}

void RequireDefined(const Expr& e, const char* what) {
  if (!e.defined()) throw IRError(std::string(what) + ": operand is undefined");
}

// Converts e to type t; constants are retyped in place rather than wrapped in
// a Cast, as TVM does, so `i + 1` with an int64 i holds an int64 literal.
Expr ConvertTo(DataType t, const Expr& e) {
  if (e.dtype() == t) return e;
  if (t.is_scalar()) {
    if (const auto* i = e.as<IntImmNode>()) {
      if (t.is_floating()) return FloatImm(static_cast<double>(i->value), t);
      return IntImm(t.is_bool() ? (i->value != 0) : i->value, t);
    }
    if (const auto* f = e.as<FloatImmNode>(); f && t.is_floating()) return FloatImm(f->value, t);
  }
  return Cast(t, e);
}

// Brings a and b to one type (see op.h); returns that type.
DataType Promote(Expr* a, Expr* b, const char* what) {
  RequireDefined(*a, what);
  RequireDefined(*b, what);
  DataType ta = a->dtype(), tb = b->dtype();
  if (ta.is_handle() || tb.is_handle()) {
    throw IRError(std::string("operator ") + what + ": operands of type handle");
  }
  if (ta.lanes() != tb.lanes()) {
    if (ta.is_scalar()) {
      *a = Broadcast(*a, tb.lanes());
      ta = a->dtype();
    } else if (tb.is_scalar()) {
      *b = Broadcast(*b, ta.lanes());
      tb = b->dtype();
    } else {
      throw IRError(std::string("operator ") + what + ": lane mismatch between " + ta.str() +
                    " and " + tb.str());
    }
  }
  if (ta == tb) return ta;
  DataType target;
  if (ta.is_floating() != tb.is_floating()) {
    target = ta.is_floating() ? ta : tb;
  } else if (ta.is_floating()) {
    target = ta.bits() >= tb.bits() ? ta : tb;
  } else {
    // Integers and bools: the wider wins; at equal width, signed wins.
    int ba = ta.is_bool() ? 0 : ta.bits(), bb = tb.is_bool() ? 0 : tb.bits();
    if (ba != bb) {
      target = ba > bb ? ta : tb;
    } else {
      target = ta.is_int() ? ta : tb;
    }
  }
  *a = ConvertTo(target, *a);
  *b = ConvertTo(target, *b);
  return target;
}

Expr LiteralLike(const Expr& like, int64_t v) {
  RequireDefined(like, "literal");
  DataType t = like.dtype().element_of();
  if (t.is_floating()) return FloatImm(static_cast<double>(v), t);
  if (t.is_bool()) t = DataType::Int32();
  return IntImm(v, t);
}

}  // namespace

namespace {

// Small constants of the index types, made once for the whole process and
// never freed: simplification and the schedule primitives make them all the
// time (zero minima, unit extents, coefficients), and nodes are immutable,
// so sharing one is safe. Their handles own nothing (std::shared_ptr's
// aliasing constructor with an empty owner), so copying or dropping one
// writes no reference count. With counted nodes, even one cache per thread
// left the search's threads writing the same counts: a program made on one
// thread holds that thread's constants, and another thread copies them when
// it extracts the program's features or checks it. Uncounted, the search
// takes 8 to 9% less CPU per trial on 2 cores (bench/search_overhead_bench,
// C2D:0 and GMM:3, the same candidates), and extracting the features of 400
// programs on 2 threads costs as much CPU as on one, not a third more.
class SmallInts {
 public:
  static constexpr int64_t kMin = -16, kMax = 1024;

  static const SmallInts& Get() {
    // Never destroyed: handles to these nodes may outlive any static.
    static const SmallInts* const table = new SmallInts();
    return *table;
  }

  // The shared constant, or nullptr if (value, t) is not one.
  const IntImmNode* Find(int64_t value, DataType t) const {
    if (value < kMin || value > kMax) return nullptr;
    if (t == DataType::Int32()) return &nodes_[Index(0, value)];
    if (t == DataType::Int64()) return &nodes_[Index(1, value)];
    if (t == DataType::Bool() && (value == 0 || value == 1))
      return &nodes_[2 * kPerType + static_cast<size_t>(value)];
    return nullptr;
  }

 private:
  static constexpr size_t kPerType = static_cast<size_t>(kMax - kMin + 1);
  static size_t Index(size_t type, int64_t value) {
    return type * kPerType + static_cast<size_t>(value - kMin);
  }

  SmallInts() {
    nodes_.reserve(2 * kPerType + 2);  // no reallocation: handles point into it
    for (DataType t : {DataType::Int32(), DataType::Int64()}) {
      for (int64_t v = kMin; v <= kMax; ++v) nodes_.emplace_back(t, v);
    }
    nodes_.emplace_back(DataType::Bool(), 0);
    nodes_.emplace_back(DataType::Bool(), 1);
  }

  std::vector<IntImmNode> nodes_;
};

}  // namespace

Expr IntImm(int64_t value, DataType t) {
  if (!(t.is_integer() || t.is_bool()) || !t.is_scalar()) {
    throw IRError("IntImm of non-integer type " + t.str());
  }
  if (const IntImmNode* n = SmallInts::Get().Find(value, t)) {
    return Expr(std::shared_ptr<const ExprNode>(std::shared_ptr<const ExprNode>(), n));
  }
  return Expr(MakeNode<IntImmNode>(t, value));
}

Expr FloatImm(double value, DataType t) {
  if (!t.is_floating() || !t.is_scalar()) throw IRError("FloatImm of non-float type " + t.str());
  return Expr(MakeNode<FloatImmNode>(t, value));
}

Expr BoolImm(bool value) { return IntImm(value ? 1 : 0, DataType::Bool()); }

Expr StringImm(std::string value) { return Expr(MakeNode<StringImmNode>(std::move(value))); }

Expr MakeConst(DataType t, double value) {
  if (t.is_vector()) return Broadcast(MakeConst(t.element_of(), value), t.lanes());
  if (t.is_floating()) return FloatImm(value, t);
  if (t.is_bool()) return BoolImm(value != 0);
  return IntImm(static_cast<int64_t>(value), t);
}

Expr MinValue(DataType t) {
  if (t.is_int()) {
    return IntImm(t.bits() == 64 ? std::numeric_limits<int64_t>::min()
                                 : -(int64_t{1} << (t.bits() - 1)),
                  t);
  }
  if (t.is_uint() || t.is_bool()) return IntImm(0, t);
  if (t.is_float()) {
    if (t.bits() == 16) return FloatImm(-65504.0, t);
    if (t.bits() == 32) return FloatImm(-std::numeric_limits<float>::max(), t);
    return FloatImm(-std::numeric_limits<double>::max(), t);
  }
  if (t.is_bfloat()) return FloatImm(-3.38953139e38, t);
  throw IRError("no minimum value for type " + t.str());
}

Expr MaxValue(DataType t) {
  if (t.is_int()) {
    return IntImm(t.bits() == 64 ? std::numeric_limits<int64_t>::max()
                                 : (int64_t{1} << (t.bits() - 1)) - 1,
                  t);
  }
  if (t.is_uint()) {
    // uint64's maximum does not fit an int64 payload; it is stored as -1.
    return IntImm(t.bits() == 64 ? -1 : (int64_t{1} << t.bits()) - 1, t);
  }
  if (t.is_bool()) return IntImm(1, t);
  if (t.is_float()) {
    if (t.bits() == 16) return FloatImm(65504.0, t);
    if (t.bits() == 32) return FloatImm(std::numeric_limits<float>::max(), t);
    return FloatImm(std::numeric_limits<double>::max(), t);
  }
  if (t.is_bfloat()) return FloatImm(3.38953139e38, t);
  throw IRError("no maximum value for type " + t.str());
}

bool AsConstInt(const Expr& e, int64_t* out) {
  if (const auto* imm = e.as<IntImmNode>()) {
    *out = imm->value;
    return true;
  }
  return false;
}

bool AsConstFloat(const Expr& e, double* out) {
  if (const auto* imm = e.as<FloatImmNode>()) {
    *out = imm->value;
    return true;
  }
  return false;
}

bool IsConstInt(const Expr& e, int64_t value) {
  int64_t v;
  return AsConstInt(e, &v) && v == value;
}

Expr Binary(ExprKind kind, Expr a, Expr b) {
  if (!IsBinary(kind)) throw IRError("Binary: not a binary expression kind");
  const char* sym = KindSymbol(kind);
  if (kind == ExprKind::kAnd || kind == ExprKind::kOr) {
    RequireDefined(a, sym);
    RequireDefined(b, sym);
    if (!a.dtype().is_bool() || !b.dtype().is_bool()) {
      throw IRError(std::string("operator ") + sym + " needs bool operands, got " +
                    a.dtype().str() + " and " + b.dtype().str());
    }
  }
  DataType t = Promote(&a, &b, sym);
  if ((kind == ExprKind::kMod || kind == ExprKind::kFloorDiv || kind == ExprKind::kFloorMod) &&
      !t.is_integer() && !t.is_floating()) {
    throw IRError(std::string("operator ") + sym + " on type " + t.str());
  }
  DataType result = IsComparison(kind) ? DataType::Bool(t.lanes()) : t;
  return Expr(MakeNode<BinaryNode>(kind, result, std::move(a), std::move(b)));
}

Expr Add(Expr a, Expr b) { return Binary(ExprKind::kAdd, std::move(a), std::move(b)); }
Expr Sub(Expr a, Expr b) { return Binary(ExprKind::kSub, std::move(a), std::move(b)); }
Expr Mul(Expr a, Expr b) { return Binary(ExprKind::kMul, std::move(a), std::move(b)); }
Expr Div(Expr a, Expr b) { return Binary(ExprKind::kDiv, std::move(a), std::move(b)); }
Expr TruncMod(Expr a, Expr b) { return Binary(ExprKind::kMod, std::move(a), std::move(b)); }
Expr FloorDiv(Expr a, Expr b) { return Binary(ExprKind::kFloorDiv, std::move(a), std::move(b)); }
Expr FloorMod(Expr a, Expr b) { return Binary(ExprKind::kFloorMod, std::move(a), std::move(b)); }
Expr Min(Expr a, Expr b) { return Binary(ExprKind::kMin, std::move(a), std::move(b)); }
Expr Max(Expr a, Expr b) { return Binary(ExprKind::kMax, std::move(a), std::move(b)); }
Expr EQ(Expr a, Expr b) { return Binary(ExprKind::kEQ, std::move(a), std::move(b)); }
Expr NE(Expr a, Expr b) { return Binary(ExprKind::kNE, std::move(a), std::move(b)); }
Expr LT(Expr a, Expr b) { return Binary(ExprKind::kLT, std::move(a), std::move(b)); }
Expr LE(Expr a, Expr b) { return Binary(ExprKind::kLE, std::move(a), std::move(b)); }
Expr GT(Expr a, Expr b) { return Binary(ExprKind::kGT, std::move(a), std::move(b)); }
Expr GE(Expr a, Expr b) { return Binary(ExprKind::kGE, std::move(a), std::move(b)); }
Expr And(Expr a, Expr b) { return Binary(ExprKind::kAnd, std::move(a), std::move(b)); }
Expr Or(Expr a, Expr b) { return Binary(ExprKind::kOr, std::move(a), std::move(b)); }

Expr Not(Expr a) {
  RequireDefined(a, "not");
  if (!a.dtype().is_bool()) throw IRError("operator not needs a bool operand, got " + a.dtype().str());
  return Expr(MakeNode<NotNode>(std::move(a)));
}

Expr Neg(Expr a) {
  RequireDefined(a, "negate");
  if (const auto* i = a.as<IntImmNode>(); i && !a.dtype().is_bool()) {
    return IntImm(-i->value, a.dtype());
  }
  if (const auto* f = a.as<FloatImmNode>()) return FloatImm(-f->value, a.dtype());
  // Build the zero first: argument evaluation order is unspecified.
  Expr zero = LiteralLike(a, 0);
  return Sub(std::move(zero), std::move(a));
}

Expr Select(Expr cond, Expr t, Expr f) {
  RequireDefined(cond, "Select");
  if (!cond.dtype().is_bool()) throw IRError("Select condition must be bool, got " + cond.dtype().str());
  Promote(&t, &f, "Select");
  return Expr(MakeNode<SelectNode>(std::move(cond), std::move(t), std::move(f)));
}

Expr IfThenElse(Expr cond, Expr t, Expr f) {
  RequireDefined(cond, "if_then_else");
  if (!cond.dtype().is_bool()) {
    throw IRError("if_then_else condition must be bool, got " + cond.dtype().str());
  }
  DataType type = Promote(&t, &f, "if_then_else");
  return Expr(MakeNode<CallNode>(type, CallOp::kIfThenElse,
                                 std::vector<Expr>{std::move(cond), std::move(t), std::move(f)}));
}

Expr Cast(DataType t, Expr v) {
  RequireDefined(v, "Cast");
  if (v.dtype() == t) return v;
  if (v.dtype().lanes() != t.lanes()) {
    if (v.dtype().is_scalar()) {
      return Broadcast(Cast(t.element_of(), std::move(v)), t.lanes());
    }
    throw IRError("Cast from " + v.dtype().str() + " to " + t.str() + " changes the lane count");
  }
  return Expr(MakeNode<CastNode>(t, std::move(v)));
}

Expr Call(CallOp op, std::vector<Expr> args) {
  if (op == CallOp::kIfThenElse) {
    if (args.size() != 3) throw IRError("if_then_else takes 3 arguments");
    return IfThenElse(std::move(args[0]), std::move(args[1]), std::move(args[2]));
  }
  const char* name = CallOpName(op);
  if (static_cast<int>(args.size()) != CallOpArity(op)) {
    throw IRError(std::string("T.") + name + " takes " + std::to_string(CallOpArity(op)) +
                  " argument(s), got " + std::to_string(args.size()));
  }
  for (const auto& a : args) RequireDefined(a, name);
  if (op == CallOp::kStorageSync) {
    if (args[0].as<StringImmNode>() == nullptr) {
      throw IRError("T.tvm_storage_sync takes a memory scope string such as \"shared\"");
    }
    return Expr(MakeNode<CallNode>(DataType::Int32(), op, std::move(args)));
  }
  if (op == CallOp::kWarpShuffleDown) {
    // (value, offset, width): any scalar value; the width is what the CUDA
    // emission and the interpreter's thread-block emulation rely on to know
    // which lanes take part, so it must be a constant.
    const DataType vt = args[0].dtype();
    if (!vt.is_scalar() || vt.is_bool() || vt.is_handle()) {
      throw IRError("T.tvm_warp_shuffle_down shuffles a scalar number, got " + vt.str());
    }
    for (int i : {1, 2}) {
      if (!args[i].dtype().is_scalar() || !args[i].dtype().is_integer()) {
        throw IRError(std::string("T.tvm_warp_shuffle_down's ") + (i == 1 ? "offset" : "width") +
                      " must be a scalar integer, got " + args[i].dtype().str());
      }
    }
    int64_t width = 0;
    if (!AsConstInt(args[2], &width) || width < 1 || width > 32 ||
        !std::has_single_bit(static_cast<uint64_t>(width))) {
      throw IRError("T.tvm_warp_shuffle_down's width must be a constant power of two from 1 to 32");
    }
    return Expr(MakeNode<CallNode>(vt, op, std::move(args)));
  }
  if (args.size() == 2) Promote(&args[0], &args[1], name);
  DataType t = args[0].dtype();
  if (!t.is_floating()) {
    throw IRError(std::string("T.") + name + " needs a float argument, got " + t.str());
  }
  DataType result = t;
  if (op == CallOp::kIsNan || op == CallOp::kIsInf || op == CallOp::kIsFinite) {
    result = DataType::Bool(t.lanes());
  }
  return Expr(MakeNode<CallNode>(result, op, std::move(args)));
}

Expr Ramp(Expr base, Expr stride, int lanes) {
  RequireDefined(base, "Ramp");
  RequireDefined(stride, "Ramp");
  if (lanes < 2) throw IRError("Ramp needs at least 2 lanes");
  if (!base.dtype().is_scalar() || !base.dtype().is_integer()) {
    throw IRError("Ramp base must be a scalar integer, got " + base.dtype().str());
  }
  if (stride.dtype() != base.dtype()) stride = Cast(base.dtype(), stride);
  return Expr(MakeNode<RampNode>(std::move(base), std::move(stride), lanes));
}

Expr Broadcast(Expr value, int lanes) {
  RequireDefined(value, "Broadcast");
  if (lanes < 2) throw IRError("Broadcast needs at least 2 lanes");
  if (!value.dtype().is_scalar()) throw IRError("Broadcast of a vector " + value.dtype().str());
  return Expr(MakeNode<BroadcastNode>(std::move(value), lanes));
}

Expr BufferLoad(Buffer buffer, std::vector<Expr> indices) {
  if (!buffer.defined()) throw IRError("BufferLoad of an undefined buffer");
  if (indices.size() != buffer.ndim()) {
    throw IRError("buffer " + buffer.name() + " has " + std::to_string(buffer.ndim()) +
                  " dimension(s) but is indexed with " + std::to_string(indices.size()));
  }
  int lanes = 1;
  for (const auto& i : indices) {
    RequireDefined(i, "BufferLoad index");
    if (!i.dtype().is_integer()) {
      throw IRError("buffer " + buffer.name() + " indexed with a " + i.dtype().str() + " value");
    }
    if (i.dtype().lanes() > 1) {
      if (lanes > 1 && lanes != i.dtype().lanes()) {
        throw IRError("buffer " + buffer.name() + " indexed with vectors of different lanes");
      }
      lanes = i.dtype().lanes();
    }
  }
  DataType t = buffer.dtype().with_lanes(lanes);
  return Expr(MakeNode<BufferLoadNode>(t, std::move(buffer), std::move(indices)));
}

Expr operator+(Expr a, int64_t b) { Expr l = LiteralLike(a, b); return Add(std::move(a), l); }
Expr operator-(Expr a, int64_t b) { Expr l = LiteralLike(a, b); return Sub(std::move(a), l); }
Expr operator*(Expr a, int64_t b) { Expr l = LiteralLike(a, b); return Mul(std::move(a), l); }
Expr operator+(int64_t a, Expr b) { Expr l = LiteralLike(b, a); return Add(l, std::move(b)); }
Expr operator-(int64_t a, Expr b) { Expr l = LiteralLike(b, a); return Sub(l, std::move(b)); }
Expr operator*(int64_t a, Expr b) { Expr l = LiteralLike(b, a); return Mul(l, std::move(b)); }

Expr operator<(Expr a, int64_t b) { Expr l = LiteralLike(a, b); return LT(std::move(a), l); }
Expr operator<=(Expr a, int64_t b) { Expr l = LiteralLike(a, b); return LE(std::move(a), l); }
Expr operator>(Expr a, int64_t b) { Expr l = LiteralLike(a, b); return GT(std::move(a), l); }
Expr operator>=(Expr a, int64_t b) { Expr l = LiteralLike(a, b); return GE(std::move(a), l); }
Expr FloorDiv(Expr a, int64_t b) { Expr l = LiteralLike(a, b); return FloorDiv(std::move(a), l); }
Expr FloorMod(Expr a, int64_t b) { Expr l = LiteralLike(a, b); return FloorMod(std::move(a), l); }

Stmt For(Var loop_var, Expr min, Expr extent, ForKind kind, Stmt body, std::string thread_tag,
         Annotations annotations) {
  if (!loop_var.defined() || !min.defined() || !extent.defined() || !body.defined()) {
    throw IRError("For: loop variable, min, extent and body must all be defined");
  }
  if (kind == ForKind::kThreadBinding && thread_tag.empty()) {
    throw IRError("For " + loop_var.name() + ": a thread-bound loop needs a thread tag");
  }
  auto n = MakeNode<ForNode>();
  n->loop_var = std::move(loop_var);
  n->min = std::move(min);
  n->extent = std::move(extent);
  n->for_kind = kind;
  n->thread_tag = std::move(thread_tag);
  n->annotations = std::move(annotations);
  n->body = std::move(body);
  return Stmt(std::move(n));
}

Stmt BufferStore(Buffer buffer, Expr value, std::vector<Expr> indices) {
  if (!buffer.defined() || !value.defined()) throw IRError("BufferStore: undefined operand");
  if (indices.size() != buffer.ndim()) {
    throw IRError("store to buffer " + buffer.name() + " with " + std::to_string(indices.size()) +
                  " index(es); it has " + std::to_string(buffer.ndim()) + " dimension(s)");
  }
  auto n = MakeNode<BufferStoreNode>();
  n->buffer = std::move(buffer);
  n->value = std::move(value);
  n->indices = std::move(indices);
  return Stmt(std::move(n));
}

Stmt SeqStmt(std::vector<Stmt> seq) {
  std::vector<Stmt> flat;
  for (auto& s : seq) {
    if (!s.defined()) continue;
    if (const auto* inner = s.as<SeqStmtNode>()) {
      flat.insert(flat.end(), inner->seq.begin(), inner->seq.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) return flat[0];
  if (flat.empty()) throw IRError("SeqStmt: empty sequence");
  auto n = MakeNode<SeqStmtNode>();
  n->seq = std::move(flat);
  return Stmt(std::move(n));
}

Stmt IfThenElseStmt(Expr cond, Stmt then_case, Stmt else_case) {
  if (!cond.defined() || !then_case.defined()) throw IRError("IfThenElse: undefined operand");
  if (!cond.dtype().is_bool()) throw IRError("if condition must be bool, got " + cond.dtype().str());
  auto n = MakeNode<IfThenElseNode>();
  n->condition = std::move(cond);
  n->then_case = std::move(then_case);
  n->else_case = std::move(else_case);
  return Stmt(std::move(n));
}

Stmt Evaluate(Expr value) {
  if (!value.defined()) throw IRError("Evaluate: undefined value");
  auto n = MakeNode<EvaluateNode>();
  n->value = std::move(value);
  return Stmt(std::move(n));
}

Stmt BlockRealize(std::vector<Expr> iter_values, Expr predicate, Block block) {
  if (!block.defined()) throw IRError("BlockRealize: undefined block");
  if (iter_values.size() != block->iter_vars.size()) {
    throw IRError("block " + block->name + " has " + std::to_string(block->iter_vars.size()) +
                  " iteration variable(s) but " + std::to_string(iter_values.size()) +
                  " binding(s)");
  }
  auto n = MakeNode<BlockRealizeNode>();
  n->iter_values = std::move(iter_values);
  n->predicate = predicate.defined() ? std::move(predicate) : BoolImm(true);
  n->block = std::move(block);
  return Stmt(std::move(n));
}

Block MakeBlock(BlockNode node) {
  if (!node.body.defined()) throw IRError("block " + node.name + " has no body");
  return Block(MakeNode<BlockNode>(std::move(node)));
}

}  // namespace kiln::ir
