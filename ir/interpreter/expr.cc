// Compiles expressions into closures. Every operator is written once as a
// scalar function on Slots and lifted over lanes by Lift1/2/3; the one-lane
// case gets its own closure so scalar code never touches a scratch vector.
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "ir/interpreter/compiler.h"
#include "ir/interpreter/thread_block.h"
#include "ir/ndarray.h"
#include "ir/op.h"

namespace kiln::ir::interp {

namespace {

template <typename Op>
ExprFn Lift1(ExprFn a, int lanes, Op op) {
  if (lanes == 1) {
    return [a = std::move(a), op](Frame& fr, Slot* out) {
      Slot x;
      a(fr, &x);
      *out = op(x);
    };
  }
  return [a = std::move(a), op, xs = std::vector<Slot>(lanes)](Frame& fr, Slot* out) mutable {
    a(fr, xs.data());
    for (size_t i = 0; i < xs.size(); ++i) out[i] = op(xs[i]);
  };
}

template <typename Op>
ExprFn Lift2(ExprFn a, ExprFn b, int lanes, Op op) {
  if (lanes == 1) {
    return [a = std::move(a), b = std::move(b), op](Frame& fr, Slot* out) {
      Slot x, y;
      a(fr, &x);
      b(fr, &y);
      *out = op(x, y);
    };
  }
  return [a = std::move(a), b = std::move(b), op, xs = std::vector<Slot>(lanes),
          ys = std::vector<Slot>(lanes)](Frame& fr, Slot* out) mutable {
    a(fr, xs.data());
    b(fr, ys.data());
    for (size_t i = 0; i < xs.size(); ++i) out[i] = op(xs[i], ys[i]);
  };
}

// Calls make(round) with a rounding function for float type t, so each
// closure is specialised for its type at compile time.
template <typename Make>
ExprFn WithRounding(DataType t, Make make) {
  if (t.is_bfloat()) return make([](double v) { return RoundToBFloat16(v); });
  switch (t.bits()) {
    case 16:
      return make([](double v) { return RoundToFloat16(v); });
    case 32:
      return make([](double v) { return static_cast<double>(static_cast<float>(v)); });
    default:
      return make([](double v) { return v; });
  }
}

// Reduces a 64-bit result to an integer type's width.
struct IntWrap {
  explicit IntWrap(DataType t) : shift(64 - (t.is_bool() ? 1 : t.bits())), is_signed(t.is_int()) {}
  int64_t operator()(uint64_t u) const {
    return is_signed ? static_cast<int64_t>(u << shift) >> shift
                     : static_cast<int64_t>((u << shift) >> shift);
  }
  int shift;
  bool is_signed;
};

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

std::string DivisionByZero(const char* op, int64_t a) {
  return std::string("integer division by zero in ") + op + "(" + std::to_string(a) + ", 0)";
}

ExprFn IntBinary(ExprKind kind, DataType t, ExprFn a, ExprFn b, int lanes,
                 const std::string* block) {
  IntWrap w(t);
  const bool u = !t.is_int();  // unsigned or bool: compare and divide as unsigned
  auto U = [](Slot s) { return static_cast<uint64_t>(s.i); };
  switch (kind) {
    case ExprKind::kAdd:
      return Lift2(std::move(a), std::move(b), lanes,
                   [w, U](Slot x, Slot y) { return IntSlot(w(U(x) + U(y))); });
    case ExprKind::kSub:
      return Lift2(std::move(a), std::move(b), lanes,
                   [w, U](Slot x, Slot y) { return IntSlot(w(U(x) - U(y))); });
    case ExprKind::kMul:
      return Lift2(std::move(a), std::move(b), lanes,
                   [w, U](Slot x, Slot y) { return IntSlot(w(U(x) * U(y))); });
    case ExprKind::kDiv:
    case ExprKind::kFloorDiv:
    case ExprKind::kMod:
    case ExprKind::kFloorMod: {
      const bool is_div = kind == ExprKind::kDiv || kind == ExprKind::kFloorDiv;
      const bool floor = kind == ExprKind::kFloorDiv || kind == ExprKind::kFloorMod;
      const char* name = kind == ExprKind::kDiv        ? "div"
                         : kind == ExprKind::kFloorDiv ? "floordiv"
                         : kind == ExprKind::kMod      ? "truncmod"
                                                       : "floormod";
      return Lift2(std::move(a), std::move(b), lanes, [=](Slot x, Slot y) {
        if (y.i == 0) Fail(block, DivisionByZero(name, x.i));
        if (u) return IntSlot(w(is_div ? U(x) / U(y) : U(x) % U(y)));
        // INT64_MIN / -1 overflows in C; the wrapped quotient is INT64_MIN.
        if (x.i == kInt64Min && y.i == -1) return IntSlot(is_div ? w(U(x)) : 0);
        int64_t q = x.i / y.i, r = x.i % y.i;
        if (floor && r != 0 && ((r < 0) != (y.i < 0))) {
          q -= 1;
          r += y.i;
        }
        return IntSlot(w(static_cast<uint64_t>(is_div ? q : r)));
      });
    }
    case ExprKind::kMin:
      if (u)
        return Lift2(std::move(a), std::move(b), lanes,
                     [U](Slot x, Slot y) { return U(x) < U(y) ? x : y; });
      return Lift2(std::move(a), std::move(b), lanes,
                   [](Slot x, Slot y) { return x.i < y.i ? x : y; });
    case ExprKind::kMax:
      if (u)
        return Lift2(std::move(a), std::move(b), lanes,
                     [U](Slot x, Slot y) { return U(x) > U(y) ? x : y; });
      return Lift2(std::move(a), std::move(b), lanes,
                   [](Slot x, Slot y) { return x.i > y.i ? x : y; });
    case ExprKind::kEQ:
      return Lift2(std::move(a), std::move(b), lanes,
                   [](Slot x, Slot y) { return IntSlot(x.i == y.i); });
    case ExprKind::kNE:
      return Lift2(std::move(a), std::move(b), lanes,
                   [](Slot x, Slot y) { return IntSlot(x.i != y.i); });
    case ExprKind::kLT:
      if (u)
        return Lift2(std::move(a), std::move(b), lanes,
                     [U](Slot x, Slot y) { return IntSlot(U(x) < U(y)); });
      return Lift2(std::move(a), std::move(b), lanes,
                   [](Slot x, Slot y) { return IntSlot(x.i < y.i); });
    case ExprKind::kLE:
      if (u)
        return Lift2(std::move(a), std::move(b), lanes,
                     [U](Slot x, Slot y) { return IntSlot(U(x) <= U(y)); });
      return Lift2(std::move(a), std::move(b), lanes,
                   [](Slot x, Slot y) { return IntSlot(x.i <= y.i); });
    case ExprKind::kGT:
      if (u)
        return Lift2(std::move(a), std::move(b), lanes,
                     [U](Slot x, Slot y) { return IntSlot(U(x) > U(y)); });
      return Lift2(std::move(a), std::move(b), lanes,
                   [](Slot x, Slot y) { return IntSlot(x.i > y.i); });
    case ExprKind::kGE:
      if (u)
        return Lift2(std::move(a), std::move(b), lanes,
                     [U](Slot x, Slot y) { return IntSlot(U(x) >= U(y)); });
      return Lift2(std::move(a), std::move(b), lanes,
                   [](Slot x, Slot y) { return IntSlot(x.i >= y.i); });
    case ExprKind::kAnd:
      return Lift2(std::move(a), std::move(b), lanes,
                   [](Slot x, Slot y) { return IntSlot(x.i != 0 && y.i != 0); });
    case ExprKind::kOr:
      return Lift2(std::move(a), std::move(b), lanes,
                   [](Slot x, Slot y) { return IntSlot(x.i != 0 || y.i != 0); });
    default:
      break;
  }
  Fail(block, "unsupported integer operator");
}

ExprFn FloatBinary(ExprKind kind, DataType t, ExprFn a, ExprFn b, int lanes,
                   const std::string* block) {
  return WithRounding(t, [&](auto round) -> ExprFn {
    switch (kind) {
      case ExprKind::kAdd:
        return Lift2(std::move(a), std::move(b), lanes,
                     [round](Slot x, Slot y) { return FloatSlot(round(x.f + y.f)); });
      case ExprKind::kSub:
        return Lift2(std::move(a), std::move(b), lanes,
                     [round](Slot x, Slot y) { return FloatSlot(round(x.f - y.f)); });
      case ExprKind::kMul:
        return Lift2(std::move(a), std::move(b), lanes,
                     [round](Slot x, Slot y) { return FloatSlot(round(x.f * y.f)); });
      case ExprKind::kDiv:
        return Lift2(std::move(a), std::move(b), lanes,
                     [round](Slot x, Slot y) { return FloatSlot(round(x.f / y.f)); });
      case ExprKind::kMod:
        return Lift2(std::move(a), std::move(b), lanes,
                     [round](Slot x, Slot y) { return FloatSlot(round(std::fmod(x.f, y.f))); });
      // Rounded after each step, as the type's own arithmetic would be.
      case ExprKind::kFloorDiv:
        return Lift2(std::move(a), std::move(b), lanes,
                     [round](Slot x, Slot y) { return FloatSlot(std::floor(round(x.f / y.f))); });
      case ExprKind::kFloorMod:
        return Lift2(std::move(a), std::move(b), lanes, [round](Slot x, Slot y) {
          return FloatSlot(round(x.f - round(std::floor(round(x.f / y.f)) * y.f)));
        });
      // As TVM's CPU code generator: min(a, b) = a < b ? a : b.
      case ExprKind::kMin:
        return Lift2(std::move(a), std::move(b), lanes,
                     [](Slot x, Slot y) { return x.f < y.f ? x : y; });
      case ExprKind::kMax:
        return Lift2(std::move(a), std::move(b), lanes,
                     [](Slot x, Slot y) { return x.f > y.f ? x : y; });
      case ExprKind::kEQ:
        return Lift2(std::move(a), std::move(b), lanes,
                     [](Slot x, Slot y) { return IntSlot(x.f == y.f); });
      case ExprKind::kNE:
        return Lift2(std::move(a), std::move(b), lanes,
                     [](Slot x, Slot y) { return IntSlot(x.f != y.f); });
      case ExprKind::kLT:
        return Lift2(std::move(a), std::move(b), lanes,
                     [](Slot x, Slot y) { return IntSlot(x.f < y.f); });
      case ExprKind::kLE:
        return Lift2(std::move(a), std::move(b), lanes,
                     [](Slot x, Slot y) { return IntSlot(x.f <= y.f); });
      case ExprKind::kGT:
        return Lift2(std::move(a), std::move(b), lanes,
                     [](Slot x, Slot y) { return IntSlot(x.f > y.f); });
      case ExprKind::kGE:
        return Lift2(std::move(a), std::move(b), lanes,
                     [](Slot x, Slot y) { return IntSlot(x.f >= y.f); });
      default:
        break;
    }
    Fail(block, "unsupported float operator");
  });
}

// Element readers by storage type; each is a type so the read can inline
// into a closure specialised for it.
using ReadFn = Slot (*)(const std::byte*);

template <typename T>
struct IntReader {
  static Slot Read(const std::byte* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return IntSlot(static_cast<int64_t>(v));
  }
};
struct BoolReader {
  static Slot Read(const std::byte* p) { return IntSlot(static_cast<uint8_t>(*p) != 0); }
};
template <typename T>
struct FloatReader {
  static Slot Read(const std::byte* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return FloatSlot(v);
  }
};
template <double (*Decode)(uint16_t)>
struct HalfReader {
  static Slot Read(const std::byte* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return FloatSlot(Decode(v));
  }
};

// Calls make(Reader{}) with the reader type for t.
template <typename Make>
auto WithReader(DataType t, Make make) {
  switch (t.code()) {
    case DataType::Code::kBool:
      return make(BoolReader{});
    case DataType::Code::kBFloat:
      return make(HalfReader<BFloat16BitsToDouble>{});
    case DataType::Code::kFloat:
      if (t.bits() == 16) return make(HalfReader<Float16BitsToDouble>{});
      if (t.bits() == 32) return make(FloatReader<float>{});
      return make(FloatReader<double>{});
    case DataType::Code::kInt:
      switch (t.bits()) {
        case 8:
          return make(IntReader<int8_t>{});
        case 16:
          return make(IntReader<int16_t>{});
        case 32:
          return make(IntReader<int32_t>{});
        default:
          return make(IntReader<int64_t>{});
      }
    case DataType::Code::kUInt:
    case DataType::Code::kHandle:
      break;
  }
  switch (t.bits()) {
    case 8:
      return make(IntReader<uint8_t>{});
    case 16:
      return make(IntReader<uint16_t>{});
    case 32:
      return make(IntReader<uint32_t>{});
    default:
      return make(IntReader<int64_t>{});  // uint64 as its bit pattern
  }
}

// The scalar expression computing lane `lane` of vector expression e; used to
// evaluate the branches of a vector if_then_else one lane at a time.
Expr ExtractLane(const Expr& e, int lane) {
  if (e.dtype().is_scalar()) return e;
  switch (e.kind()) {
    case ExprKind::kRamp: {
      const auto* r = e.as<RampNode>();
      return Add(r->base, Mul(r->stride, IntImm(lane, r->stride.dtype())));
    }
    case ExprKind::kBroadcast:
      return e.as<BroadcastNode>()->value;
    case ExprKind::kNot:
      return Not(ExtractLane(e.as<NotNode>()->a, lane));
    case ExprKind::kSelect: {
      const auto* s = e.as<SelectNode>();
      return Select(ExtractLane(s->condition, lane), ExtractLane(s->true_value, lane),
                    ExtractLane(s->false_value, lane));
    }
    case ExprKind::kCast: {
      const auto* c = e.as<CastNode>();
      return Cast(e.dtype().element_of(), ExtractLane(c->value, lane));
    }
    case ExprKind::kBufferLoad: {
      const auto* l = e.as<BufferLoadNode>();
      std::vector<Expr> idx;
      for (const auto& i : l->indices) idx.push_back(ExtractLane(i, lane));
      return BufferLoad(l->buffer, std::move(idx));
    }
    case ExprKind::kCall: {
      const auto* c = e.as<CallNode>();
      std::vector<Expr> args;
      for (const auto& a : c->args) args.push_back(ExtractLane(a, lane));
      return Call(c->op, std::move(args));
    }
    default:
      break;
  }
  if (const auto* b = e.as<BinaryNode>()) {
    return Binary(e.kind(), ExtractLane(b->a, lane), ExtractLane(b->b, lane));
  }
  throw InterpreterError("cannot take a lane of a " + e.dtype().str() + " expression");
}

}  // namespace

[[noreturn]] void Fail(const std::string* block, const std::string& msg) {
  throw InterpreterError(block ? "block '" + *block + "': " + msg : msg);
}

std::string AccessString(const std::string& buffer, const std::vector<int64_t>& indices) {
  std::string s = buffer + "[";
  for (size_t i = 0; i < indices.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(indices[i]);
  }
  return s + "]";
}

ExprFn MakeConvert(ExprFn value, DataType from, DataType to) {
  const int lanes = to.lanes();
  from = from.element_of();
  to = to.element_of();
  if (from == to) return value;
  if (from.is_floating() && to.is_floating()) {
    return WithRounding(to, [&](auto round) {
      return Lift1(std::move(value), lanes, [round](Slot x) { return FloatSlot(round(x.f)); });
    });
  }
  if (from.is_floating()) {
    return Lift1(std::move(value), lanes,
                 [to](Slot x) { return IntSlot(DoubleToIntSaturating(x.f, to)); });
  }
  if (to.is_floating()) {
    const bool u64 = from.is_uint() && from.bits() == 64;
    if (to.is_float() && to.bits() == 32) {
      // Straight to float: going through double could round twice.
      if (u64) {
        return Lift1(std::move(value), lanes, [](Slot x) {
          return FloatSlot(static_cast<float>(static_cast<uint64_t>(x.i)));
        });
      }
      return Lift1(std::move(value), lanes,
                   [](Slot x) { return FloatSlot(static_cast<float>(x.i)); });
    }
    return WithRounding(to, [&](auto round) {
      return Lift1(std::move(value), lanes, [round, u64](Slot x) {
        return FloatSlot(round(u64 ? static_cast<double>(static_cast<uint64_t>(x.i))
                                   : static_cast<double>(x.i)));
      });
    });
  }
  IntWrap w(to);
  if (to.is_bool()) return Lift1(std::move(value), lanes, [](Slot x) { return IntSlot(x.i != 0); });
  return Lift1(std::move(value), lanes,
               [w](Slot x) { return IntSlot(w(static_cast<uint64_t>(x.i))); });
}

CompiledExpr Compiler::CompileExpr(const Expr& e) {
  if (!e.defined()) Error("undefined expression");
  const DataType t = e.dtype();
  const int lanes = t.lanes();
  switch (e.kind()) {
    case ExprKind::kIntImm: {
      Slot v = IntSlot(WrapToIntType(e.as<IntImmNode>()->value, t));
      return {[v](Frame&, Slot* out) { *out = v; }, t};
    }
    case ExprKind::kFloatImm: {
      Slot v = FloatSlot(RoundToFloatType(e.as<FloatImmNode>()->value, t));
      return {[v](Frame&, Slot* out) { *out = v; }, t};
    }
    case ExprKind::kStringImm:
      Error("a string constant cannot be evaluated");
    case ExprKind::kVar: {
      const auto* v = e.as<VarNode>();
      if (!t.is_integer() && !t.is_bool()) {
        Error("variable '" + v->name + "' has type " + t.str() + "; only integer variables exist");
      }
      int slot = VarSlot(v);
      return {[slot](Frame& fr, Slot* out) { out->i = fr.vars[slot]; }, t};
    }
    case ExprKind::kNot: {
      CompiledExpr a = CompileExpr(e.as<NotNode>()->a);
      return {Lift1(std::move(a.fn), lanes, [](Slot x) { return IntSlot(x.i == 0); }), t};
    }
    case ExprKind::kSelect: {
      const auto* s = e.as<SelectNode>();
      CompiledExpr c = CompileExpr(s->condition);
      CompiledExpr tv = CompileExpr(s->true_value);
      CompiledExpr fv = CompileExpr(s->false_value);
      if (tv.lanes() != lanes || fv.lanes() != lanes || (c.lanes() != 1 && c.lanes() != lanes)) {
        Error("Select with mismatched lanes (" + c.dtype.str() + ", " + tv.dtype.str() + ", " +
              fv.dtype.str() + ")");
      }
      if (lanes == 1) {
        return {[c = std::move(c.fn), a = std::move(tv.fn), b = std::move(fv.fn)](Frame& fr,
                                                                                  Slot* out) {
                  Slot cond, x, y;
                  c(fr, &cond);
                  a(fr, &x);
                  b(fr, &y);
                  *out = cond.i ? x : y;
                },
                t};
      }
      const bool scalar_cond = c.lanes() == 1;
      return {[c = std::move(c.fn), a = std::move(tv.fn), b = std::move(fv.fn), scalar_cond,
               cs = std::vector<Slot>(lanes), xs = std::vector<Slot>(lanes),
               ys = std::vector<Slot>(lanes)](Frame& fr, Slot* out) mutable {
                c(fr, cs.data());
                a(fr, xs.data());
                b(fr, ys.data());
                for (size_t i = 0; i < xs.size(); ++i) {
                  out[i] = cs[scalar_cond ? 0 : i].i ? xs[i] : ys[i];
                }
              },
              t};
    }
    case ExprKind::kCast:
      return CompileCast(e.as<CastNode>());
    case ExprKind::kBufferLoad:
      return CompileLoad(e.as<BufferLoadNode>());
    case ExprKind::kCall:
      return CompileCall(e.as<CallNode>());
    case ExprKind::kRamp: {
      const auto* r = e.as<RampNode>();
      CompiledExpr base = CompileExpr(r->base), stride = CompileExpr(r->stride);
      IntWrap w(t.element_of());
      return {[base = std::move(base.fn), stride = std::move(stride.fn), w, lanes](Frame& fr,
                                                                                   Slot* out) {
                Slot b, s;
                base(fr, &b);
                stride(fr, &s);
                for (int i = 0; i < lanes; ++i) {
                  out[i] = IntSlot(w(static_cast<uint64_t>(b.i) +
                                     static_cast<uint64_t>(s.i) * static_cast<uint64_t>(i)));
                }
              },
              t};
    }
    case ExprKind::kBroadcast: {
      CompiledExpr v = CompileExpr(e.as<BroadcastNode>()->value);
      return {[v = std::move(v.fn), lanes](Frame& fr, Slot* out) {
                Slot x;
                v(fr, &x);
                for (int i = 0; i < lanes; ++i) out[i] = x;
              },
              t};
    }
    default:
      break;
  }
  if (const auto* b = e.as<BinaryNode>()) return CompileBinary(b);
  Error("unknown expression kind");
}

IntOperand Compiler::CompileIntOperand(const Expr& e, const std::string& what) {
  IntOperand op;
  if (!e.defined()) Error(what + " is undefined");
  const DataType t = e.dtype();
  if (!t.is_scalar() || !(t.is_integer() || t.is_bool())) Error(what + " has type " + t.str());
  if (const auto* v = e.as<VarNode>()) {
    op.var_slot = VarSlot(v);
  } else if (const auto* imm = e.as<IntImmNode>()) {
    op.constant = WrapToIntType(imm->value, t);
  } else {
    op.fn = CompileExpr(e).fn;
  }
  return op;
}

CompiledExpr Compiler::CompileBinary(const BinaryNode* op) {
  CompiledExpr a = CompileExpr(op->a), b = CompileExpr(op->b);
  const int lanes = op->dtype.lanes();
  if (a.lanes() != lanes || b.lanes() != lanes) {
    Error("binary operator on " + a.dtype.str() + " and " + b.dtype.str() + " giving " +
          op->dtype.str());
  }
  if (a.dtype.element_of() != b.dtype.element_of()) {
    Error("binary operator on different types " + a.dtype.str() + " and " + b.dtype.str());
  }
  const DataType t = a.dtype.element_of();
  if (t.is_handle()) Error("arithmetic on a handle");
  ExprFn fn = t.is_floating()
                  ? FloatBinary(op->kind, t, std::move(a.fn), std::move(b.fn), lanes, block_)
                  : IntBinary(op->kind, t, std::move(a.fn), std::move(b.fn), lanes, block_);
  return {std::move(fn), op->dtype};
}

CompiledExpr Compiler::CompileCast(const CastNode* op) {
  CompiledExpr v = CompileExpr(op->value);
  if (v.lanes() != op->dtype.lanes()) {
    Error("cast from " + v.dtype.str() + " to " + op->dtype.str() + " changes the lane count");
  }
  if (op->dtype.is_handle() || v.dtype.is_handle()) Error("cast involving a handle");
  return {MakeConvert(std::move(v.fn), v.dtype, op->dtype), op->dtype};
}

CompiledExpr Compiler::CompileLoad(const BufferLoadNode* op) {
  const Buffer& buf = op->buffer;
  const int slot = BufferSlot(buf);
  const int lanes = op->dtype.lanes();
  const int64_t elem = buf.dtype().bytes();
  const std::string* block = block_;
  const std::string* name = &buf.get()->name;
  const size_t ndim = op->indices.size();
  if (ndim != buf.ndim()) Error("load " + buf.name() + " with the wrong number of indices");

  if (lanes == 1) {
    std::vector<IntOperand> index;
    for (const auto& i : op->indices)
      index.push_back(CompileIntOperand(i, "an index of " + buf.name()));
    ExprFn fn = WithReader(buf.dtype(), [&](auto reader) -> ExprFn {
      return [index = std::move(index), elem, slot, block, name](Frame& fr, Slot* out) {
        const BufferView& b = fr.buffers[slot];
        int64_t offset = 0;
        for (size_t d = 0; d < index.size(); ++d) {
          const int64_t i = index[d].Eval(fr);
          if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(b.shape[d])) {
            std::vector<int64_t> all;
            for (const IntOperand& k : index) all.push_back(k.Eval(fr));
            Fail(block, "load " + AccessString(*name, all) + " is out of bounds of shape " +
                            ShapeToString(b.shape));
          }
          offset += i * b.strides[d];
        }
        *out = decltype(reader)::Read(b.data + offset * elem);
      };
    });
    return {std::move(fn), op->dtype};
  }
  const ReadFn read =
      WithReader(buf.dtype(), [](auto reader) { return ReadFn{&decltype(reader)::Read}; });
  std::vector<ExprFn> index;
  std::vector<int> index_lanes;
  for (const auto& i : op->indices) {
    CompiledExpr c = CompileExpr(i);
    if (!c.dtype.is_integer()) Error("load " + buf.name() + " with a " + c.dtype.str() + " index");
    if (c.lanes() != 1 && c.lanes() != lanes) {
      Error("load " + buf.name() + " with an index of " + c.dtype.str() + " for " +
            op->dtype.str());
    }
    index.push_back(std::move(c.fn));
    index_lanes.push_back(c.lanes());
  }
  return {
      [index = std::move(index), index_lanes = std::move(index_lanes), read, elem, slot, block,
       name, ndim, lanes, scratch = std::vector<Slot>(ndim * lanes)](Frame& fr, Slot* out) mutable {
        const BufferView& b = fr.buffers[slot];
        for (size_t d = 0; d < ndim; ++d) index[d](fr, &scratch[d * lanes]);
        for (int l = 0; l < lanes; ++l) {
          int64_t offset = 0;
          for (size_t d = 0; d < ndim; ++d) {
            int64_t v = scratch[d * lanes + (index_lanes[d] == 1 ? 0 : l)].i;
            if (static_cast<uint64_t>(v) >= static_cast<uint64_t>(b.shape[d])) {
              std::vector<int64_t> all(ndim);
              for (size_t k = 0; k < ndim; ++k) {
                all[k] = scratch[k * lanes + (index_lanes[k] == 1 ? 0 : l)].i;
              }
              Fail(block, "load " + AccessString(*name, all) + " (lane " + std::to_string(l) +
                              ") is out of bounds of shape " + ShapeToString(b.shape));
            }
            offset += v * b.strides[d];
          }
          out[l] = read(b.data + offset * elem);
        }
      },
      op->dtype};
}

CompiledExpr Compiler::CompileIfThenElse(const CallNode* op) {
  CompiledExpr c = CompileExpr(op->args[0]);
  CompiledExpr tv = CompileExpr(op->args[1]);
  CompiledExpr fv = CompileExpr(op->args[2]);
  const int lanes = op->dtype.lanes();
  if (c.lanes() == 1) {
    return {
        [c = std::move(c.fn), a = std::move(tv.fn), b = std::move(fv.fn)](Frame& fr, Slot* out) {
          Slot cond;
          c(fr, &cond);
          if (cond.i) {
            a(fr, out);
          } else {
            b(fr, out);
          }
        },
        op->dtype};
  }
  // A vector condition: a lane whose condition is false must not evaluate
  // the true branch (it may read out of bounds there), so mixed conditions
  // evaluate each lane's branch separately.
  std::vector<ExprFn> then_lanes, else_lanes;
  for (int l = 0; l < lanes; ++l) {
    then_lanes.push_back(CompileExpr(ExtractLane(op->args[1], l)).fn);
    else_lanes.push_back(CompileExpr(ExtractLane(op->args[2], l)).fn);
  }
  return {[c = std::move(c.fn), a = std::move(tv.fn), b = std::move(fv.fn),
           then_lanes = std::move(then_lanes), else_lanes = std::move(else_lanes), lanes,
           cs = std::vector<Slot>(lanes)](Frame& fr, Slot* out) mutable {
            c(fr, cs.data());
            int taken = 0;
            for (const Slot& s : cs) taken += s.i != 0;
            if (taken == lanes) return a(fr, out);
            if (taken == 0) return b(fr, out);
            for (int l = 0; l < lanes; ++l) (cs[l].i ? then_lanes[l] : else_lanes[l])(fr, &out[l]);
          },
          op->dtype};
}

CompiledExpr Compiler::CompileWarpShuffle(const CallNode* op) {
  if (!in_gpu_block_ || !shuffle_allowed_) {
    Error("T.tvm_warp_shuffle_down must be the whole value of a scalar store inside the thread "
          "loops of a GPU kernel");
  }
  shuffle_allowed_ = false;
  CompiledExpr value = CompileExpr(op->args[0]);
  if (value.lanes() != 1) Error("T.tvm_warp_shuffle_down of a " + value.dtype.str() + " value");
  IntOperand offset = CompileIntOperand(op->args[1], "the offset of a warp shuffle");
  IntOperand width = CompileIntOperand(op->args[2], "the width of a warp shuffle");
  // The site: this call's own cell (copies of one node made by unrolling
  // are different shuffles).
  return {[value = std::move(value.fn), offset = std::move(offset), width = std::move(width),
           site = std::make_shared<char>()](Frame& fr, Slot* out) {
            Slot v;
            value(fr, &v);
            int64_t bits = 0;
            std::memcpy(&bits, &v, sizeof bits);
            bits = fr.gpu->block->ShuffleDown(*fr.gpu, bits, offset.Eval(fr), width.Eval(fr),
                                              site.get());
            std::memcpy(out, &bits, sizeof bits);
          },
          op->dtype};
}

CompiledExpr Compiler::CompileCall(const CallNode* op) {
  if (op->op == CallOp::kIfThenElse) return CompileIfThenElse(op);
  if (op->op == CallOp::kStorageSync) {
    // Inside a kernel's thread loops it is a statement of its own, run by
    // the thread block (stmt.cc); anywhere else it has no meaning.
    Error("T.tvm_storage_sync is a GPU thread barrier: it must be a statement (T.evaluate) inside "
          "the thread loops of a GPU kernel");
  }
  if (op->op == CallOp::kWarpShuffleDown) return CompileWarpShuffle(op);
  std::vector<CompiledExpr> args;
  for (const auto& a : op->args) args.push_back(CompileExpr(a));
  if (static_cast<int>(args.size()) != CallOpArity(op->op)) {
    Error(std::string("T.") + CallOpName(op->op) + " with " + std::to_string(args.size()) +
          " argument(s)");
  }
  const DataType t = args[0].dtype.element_of();
  const int lanes = op->dtype.lanes();
  for (const auto& a : args) {
    if (!a.dtype.is_floating() || a.lanes() != lanes) {
      Error(std::string("T.") + CallOpName(op->op) + " on " + a.dtype.str());
    }
  }
  ExprFn x = args[0].fn;
  auto unary = [&](double (*fn)(double)) {
    return WithRounding(t, [&](auto round) {
      return Lift1(std::move(x), lanes, [round, fn](Slot s) { return FloatSlot(round(fn(s.f))); });
    });
  };
  auto binary = [&](double (*fn)(double, double)) {
    return WithRounding(t, [&](auto round) {
      return Lift2(std::move(x), std::move(args[1].fn), lanes,
                   [round, fn](Slot a, Slot b) { return FloatSlot(round(fn(a.f, b.f))); });
    });
  };
  auto predicate = [&](bool (*fn)(double)) {
    return Lift1(std::move(x), lanes, [fn](Slot s) { return IntSlot(fn(s.f)); });
  };
  ExprFn fn;
  switch (op->op) {
    case CallOp::kExp:
      fn = unary([](double v) { return std::exp(v); });
      break;
    case CallOp::kExp2:
      fn = unary([](double v) { return std::exp2(v); });
      break;
    case CallOp::kExp10:
      fn = unary([](double v) { return std::pow(10.0, v); });
      break;
    case CallOp::kLog:
      fn = unary([](double v) { return std::log(v); });
      break;
    case CallOp::kLog2:
      fn = unary([](double v) { return std::log2(v); });
      break;
    case CallOp::kLog10:
      fn = unary([](double v) { return std::log10(v); });
      break;
    case CallOp::kLog1p:
      fn = unary([](double v) { return std::log1p(v); });
      break;
    case CallOp::kSqrt:
      fn = unary([](double v) { return std::sqrt(v); });
      break;
    case CallOp::kRsqrt:
      fn = unary([](double v) { return 1.0 / std::sqrt(v); });
      break;
    case CallOp::kTanh:
      fn = unary([](double v) { return std::tanh(v); });
      break;
    case CallOp::kSigmoid:
      fn = unary([](double v) { return 1.0 / (1.0 + std::exp(-v)); });
      break;
    case CallOp::kPow:
      fn = binary([](double a, double b) { return std::pow(a, b); });
      break;
    case CallOp::kFabs:
      fn = unary([](double v) { return std::fabs(v); });
      break;
    case CallOp::kErf:
      fn = unary([](double v) { return std::erf(v); });
      break;
    case CallOp::kFloor:
      fn = unary([](double v) { return std::floor(v); });
      break;
    case CallOp::kCeil:
      fn = unary([](double v) { return std::ceil(v); });
      break;
    // TVM lowers round to nearbyint: halfway cases go to even.
    case CallOp::kRound:
      fn = unary([](double v) { return std::nearbyint(v); });
      break;
    case CallOp::kTrunc:
      fn = unary([](double v) { return std::trunc(v); });
      break;
    case CallOp::kSin:
      fn = unary([](double v) { return std::sin(v); });
      break;
    case CallOp::kCos:
      fn = unary([](double v) { return std::cos(v); });
      break;
    case CallOp::kTan:
      fn = unary([](double v) { return std::tan(v); });
      break;
    case CallOp::kAtan:
      fn = unary([](double v) { return std::atan(v); });
      break;
    case CallOp::kIsNan:
      fn = predicate([](double v) { return std::isnan(v); });
      break;
    case CallOp::kIsInf:
      fn = predicate([](double v) { return std::isinf(v); });
      break;
    case CallOp::kIsFinite:
      fn = predicate([](double v) { return std::isfinite(v); });
      break;
    case CallOp::kFmod:
      fn = binary([](double a, double b) { return std::fmod(a, b); });
      break;
    case CallOp::kIfThenElse:
    case CallOp::kStorageSync:
    case CallOp::kWarpShuffleDown:
    case CallOp::kCount_:
      Error("unknown intrinsic");
  }
  return {std::move(fn), op->dtype};
}

}  // namespace kiln::ir::interp
