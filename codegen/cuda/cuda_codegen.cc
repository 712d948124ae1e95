#include "codegen/cuda/cuda_codegen.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "codegen/cuda/cuda_wmma.h"
#include "codegen/llvm_backend.h"
#include "ir/error.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/tensor_intrin/tensor_intrin.h"
#include "ir/transform/gpu_kernels.h"
#include "ir/transform/lower.h"
#include "ir/transform/verify_gpu_code.h"
#include "ir/transform/verify_lowered.h"

namespace kiln::codegen {
namespace {

using ir::DataType;
using ir::Expr;
using ir::ExprKind;
using ir::Stmt;
using ir::StmtKind;

[[noreturn]] void Fail(const std::string& msg) { throw BuildError("CUDA codegen: " + msg); }

std::string CType(DataType t) {
  if (t.lanes() != 1) Fail("vector type " + t.str() + " (lowered code is scalar)");
  if (t.is_bool()) return "bool";
  if (t.is_float() && t.bits() == 16) return "half";  // cuda_fp16.h
  if (t.is_float() && t.bits() == 32) return "float";
  if (t.is_float() && t.bits() == 64) return "double";
  if (t.is_int() || t.is_uint()) {
    // NVRTC has no <cstdint>: the fixed-width types are spelled out.
    const std::string u = t.is_uint() ? "unsigned " : "";
    switch (t.bits()) {
      case 8: return t.is_uint() ? "unsigned char" : "signed char";
      case 16: return u + "short";
      case 32: return u + "int";
      case 64: return u + "long long";
      default: break;
    }
  }
  Fail("no CUDA type for " + t.str() + " yet");
}

// An identifier from a hint: letters, digits and '_' only, not a CUDA or
// C++ keyword we might meet, not starting with a digit.
std::string Sanitize(const std::string& hint) {
  std::string s;
  for (char c : hint) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v_" + s;
  static const std::set<std::string> kReserved = {
      "int", "float", "double", "bool", "char", "long", "short", "unsigned", "signed",
      "if", "else", "for", "while", "do", "return", "const", "auto", "void", "min", "max",
      "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "half", "float4"};
  if (kReserved.count(s)) s += "_";
  return s;
}

std::string FloatLiteral(double v, DataType t) {
  bool f32 = t.bits() == 32;
  if (std::isnan(v)) return f32 ? "__int_as_float(0x7fc00000)" : "__longlong_as_double(0x7ff8000000000000LL)";
  if (std::isinf(v)) {
    std::string s = f32 ? "__int_as_float(0x7f800000)" : "__longlong_as_double(0x7ff0000000000000LL)";
    return v < 0 ? "(-" + s + ")" : s;
  }
  char buf[64];
  auto r = f32 ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v))
               : std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  if (f32) s += "f";
  return s;
}

// C operator precedence, smaller binds tighter.
enum Prec { kPrimary = 0, kUnary = 2, kMul = 3, kAdd = 4, kRel = 6, kEq = 7, kAnd = 11,
            kOr = 12, kCond = 13 };

struct Code {
  std::string text;
  int prec = kPrimary;
};

class KernelEmitter {
 public:
  KernelEmitter(std::unordered_map<const ir::BufferNode*, std::string> buffer_names)
      : buffer_names_(std::move(buffer_names)) {
    for (const auto& [b, n] : buffer_names_) used_.insert(n);
  }

  // Declares a launch variable for the kernel's prologue.
  std::string Bind(const ir::Var& v) { return Name(v.get()); }

  std::string Emit(const Expr& e) { return E(e).text; }

  void EmitStmt(const Stmt& s, int indent, std::ostream& os) {
    const std::string pad(static_cast<size_t>(indent) * 2, ' ');
    switch (s.kind()) {
      case StmtKind::kSeqStmt:
        for (const auto& c : s.as<ir::SeqStmtNode>()->seq) EmitStmt(c, indent, os);
        return;
      case StmtKind::kEvaluate: {
        const Expr& v = s.as<ir::EvaluateNode>()->value;
        const auto* c = v.as<ir::CallNode>();
        if (c != nullptr && c->op == ir::CallOp::kStorageSync) {
          os << pad << "__syncthreads();\n";

        } else if (v.as<ir::IntImmNode>() == nullptr) {
          os << pad << Emit(v) << ";\n";
        }
        return;
      }
      case StmtKind::kBufferStore: {
        const auto* st = s.as<ir::BufferStoreNode>();
        os << pad << BufName(st->buffer) << "[" << Emit(st->indices.at(0)) << "] = "
           << Emit(st->value) << ";\n";
        return;
      }
      case StmtKind::kIfThenElse: {
        const auto* i = s.as<ir::IfThenElseNode>();
        os << pad << "if (" << Emit(i->condition) << ") {\n";
        EmitStmt(i->then_case, indent + 1, os);
        if (i->else_case.defined()) {
          os << pad << "} else {\n";
          EmitStmt(i->else_case, indent + 1, os);
        }
        os << pad << "}\n";
        return;
      }
      case StmtKind::kFor: {
        const auto* f = s.as<ir::ForNode>();
        std::string why;
        if (auto t = ir::AsLoweredTensorIntrin(*f, &why)) {
          os << WmmaStatement(
              *t, pad, [&](const Expr& x) { return Emit(x); },
              [&](const ir::Buffer& b) { return BufName(b); });
          return;
        }
        if (!why.empty()) Fail(why);
        if (f->for_kind == ir::ForKind::kParallel || f->for_kind == ir::ForKind::kThreadBinding) {
          Fail(std::string("a ") + ir::ForKindName(f->for_kind) + " loop (" + f->loop_var.name() +
               ") inside a kernel body");
        }
        if (f->for_kind == ir::ForKind::kUnrolled || f->for_kind == ir::ForKind::kVectorized) {
          os << pad << "#pragma unroll\n";
        }
        std::string v = Name(f->loop_var.get());
        std::string t = CType(f->loop_var.dtype());
        std::string min = Emit(f->min);
        std::string end = ir::IsConstInt(f->min, 0) ? Emit(f->extent)
                                                    : E(ir::Add(f->min, f->extent)).text;
        os << pad << "for (" << t << " " << v << " = " << min << "; " << v << " < " << end
           << "; ++" << v << ") {\n";
        EmitStmt(f->body, indent + 1, os);
        os << pad << "}\n";
        return;
      }
      case StmtKind::kBlockRealize: {
        const ir::BlockNode& b = *s.as<ir::BlockRealizeNode>()->block.get();
        bool local = false;
        for (const auto& buf : b.alloc_buffers) {
          local = local || buf.scope() == "local" || IsWmmaScope(buf.scope());
        }
        if (local) os << pad << "{\n";
        int inner = local ? indent + 1 : indent;
        for (const auto& buf : b.alloc_buffers) {
          if (IsWmmaScope(buf.scope())) {  // one fragment array per warp
            os << std::string(static_cast<size_t>(inner) * 2, ' ')
               << WmmaFragmentDecl(buf, DeclareBuffer(buf)) << "\n";
            continue;
          }
          if (buf.scope() != "local") continue;  // shared: declared at the kernel's top
          int64_t n = 0;
          if (buf.ndim() != 1 || !ir::AsConstInt(buf.shape()[0], &n)) {
            Fail("local buffer '" + buf.name() + "' has no constant one-dimensional size");
          }
          os << std::string(static_cast<size_t>(inner) * 2, ' ') << CType(buf.dtype()) << " "
             << DeclareBuffer(buf) << "[" << n << "];\n";
        }
        EmitStmt(b.body, inner, os);
        if (local) os << pad << "}\n";
        return;
      }
    }
    Fail("unknown statement");
  }

  std::string DeclareBuffer(const ir::Buffer& b) {
    std::string n = Fresh(b.name());
    buffer_names_[b.get()] = n;
    return n;
  }

 private:
  std::string Fresh(const std::string& hint) {
    std::string base = Sanitize(hint), n = base;
    for (int i = 1; used_.count(n); ++i) n = base + "_" + std::to_string(i);
    used_.insert(n);
    return n;
  }
  std::string Name(const ir::VarNode* v) {
    auto it = var_names_.find(v);
    if (it != var_names_.end()) return it->second;
    return var_names_[v] = Fresh(v->name);
  }
  std::string BufName(const ir::Buffer& b) {
    auto it = buffer_names_.find(b.get());
    if (it == buffer_names_.end()) Fail("buffer '" + b.name() + "' used outside its allocation");
    return it->second;
  }

  static std::string Wrap(const Code& c, int max_prec) {
    return c.prec > max_prec ? "(" + c.text + ")" : c.text;
  }

  Code Bin(const Expr& a, const char* op, const Expr& b, int prec) {
    // Left-associative: the right operand needs parentheses at equal precedence.
    return {Wrap(E(a), prec) + " " + op + " " + Wrap(E(b), prec - 1), prec};
  }
  Code Fn(const std::string& name, const std::vector<Expr>& args) {
    std::string s = name + "(";
    for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + E(args[i]).text;
    return {s + ")", kPrimary};
  }

  // cuda_fp16.h gives half the four operations and comparisons; everything
  // else (min/max, remainders, the math library) runs in float, as the CPU
  // backend does (codegen/llvm_emit_expr.cc).
  static bool IsHalf(DataType t) { return t.is_float() && t.bits() == 16; }
  static Expr InFloat(const Expr& e) { return ir::Cast(DataType::Float32(), e); }
  Code HalfViaFloat(const Expr& e) {
    auto back = [&](Expr f) { return E(ir::Cast(e.dtype(), std::move(f))); };
    if (const auto* c = e.as<ir::CallNode>()) {
      std::vector<Expr> args;
      for (const Expr& a : c->args) args.push_back(IsHalf(a.dtype()) ? InFloat(a) : a);
      Expr f = ir::Call(c->op, std::move(args));
      return f.dtype().is_bool() ? E(f) : back(f);
    }
    const auto* b = e.as<ir::BinaryNode>();
    Expr x = InFloat(b->a), y = InFloat(b->b);
    switch (e.kind()) {
      case ExprKind::kMod: return back(ir::TruncMod(x, y));
      case ExprKind::kFloorDiv: return back(ir::FloorDiv(x, y));
      case ExprKind::kMin: return back(ir::Min(x, y));
      case ExprKind::kMax: return back(ir::Max(x, y));
      default: break;
    }
    Fail("no half-precision form of expression kind " + std::to_string(static_cast<int>(e.kind())));
  }

  Code E(const Expr& e) {
    if (!e.defined()) Fail("undefined expression");
    DataType t = e.dtype();
    if (IsHalf(t) || (e.kind() == ExprKind::kCall && !e.as<ir::CallNode>()->args.empty() &&
                      IsHalf(e.as<ir::CallNode>()->args[0].dtype()))) {
      bool via_float = e.kind() == ExprKind::kMod || e.kind() == ExprKind::kFloorDiv ||
                       e.kind() == ExprKind::kMin || e.kind() == ExprKind::kMax ||
                       (e.kind() == ExprKind::kCall &&
                        e.as<ir::CallNode>()->op != ir::CallOp::kIfThenElse);
      if (via_float) return HalfViaFloat(e);
    }
    switch (e.kind()) {
      case ExprKind::kIntImm: {
        int64_t v = e.as<ir::IntImmNode>()->value;
        if (t.is_bool()) return {v ? "true" : "false"};
        std::string s = std::to_string(v);
        if (t.bits() == 64) s += "LL";
        if (t.is_uint()) s += "u";
        if (t.bits() < 32 || (t.bits() == 32 && v == INT32_MIN)) {
          return {"((" + CType(t) + ")" + s + ")", kPrimary};
        }
        return {s, v < 0 ? kUnary : kPrimary};
      }
      case ExprKind::kFloatImm: {
        if (IsHalf(t)) {
          return {"__float2half_rn(" + FloatLiteral(e.as<ir::FloatImmNode>()->value,
                                                    DataType::Float32()) + ")"};
        }
        std::string s = FloatLiteral(e.as<ir::FloatImmNode>()->value, t);
        return {s, s[0] == '-' ? kUnary : kPrimary};
      }
      case ExprKind::kVar:
        return {Name(e.as<ir::VarNode>()), kPrimary};
      case ExprKind::kAdd: {
        const auto* b = e.as<ir::BinaryNode>();
        return Bin(b->a, "+", b->b, kAdd);
      }
      case ExprKind::kSub: {
        const auto* b = e.as<ir::BinaryNode>();
        return Bin(b->a, "-", b->b, kAdd);
      }
      case ExprKind::kMul: {
        const auto* b = e.as<ir::BinaryNode>();
        return Bin(b->a, "*", b->b, kMul);
      }
      case ExprKind::kDiv: {
        const auto* b = e.as<ir::BinaryNode>();
        return Bin(b->a, "/", b->b, kMul);
      }
      case ExprKind::kMod: {
        const auto* b = e.as<ir::BinaryNode>();
        if (t.is_floating()) return Fn(t.bits() == 32 ? "fmodf" : "fmod", {b->a, b->b});
        return Bin(b->a, "%", b->b, kMul);
      }
      case ExprKind::kFloorDiv: {
        const auto* b = e.as<ir::BinaryNode>();
        if (t.is_floating()) {
          return {std::string(t.bits() == 32 ? "floorf" : "floor") + "(" + Wrap(E(b->a), kMul) +
                      " / " + Wrap(E(b->b), kMul - 1) + ")"};
        }
        if (t.is_uint()) return Bin(b->a, "/", b->b, kMul);
        return Fn("kiln_floordiv", {b->a, b->b});
      }
      case ExprKind::kFloorMod: {
        const auto* b = e.as<ir::BinaryNode>();
        if (t.is_floating()) Fail("floormod of floats");
        if (t.is_uint()) return Bin(b->a, "%", b->b, kMul);
        return Fn("kiln_floormod", {b->a, b->b});
      }
      case ExprKind::kMin:
      case ExprKind::kMax: {
        const auto* b = e.as<ir::BinaryNode>();
        bool mn = e.kind() == ExprKind::kMin;
        if (t.is_floating()) {
          return Fn(std::string(mn ? "fmin" : "fmax") + (t.bits() == 32 ? "f" : ""), {b->a, b->b});
        }
        return Fn(mn ? "min" : "max", {b->a, b->b});
      }
      case ExprKind::kEQ: { const auto* b = e.as<ir::BinaryNode>(); return Bin(b->a, "==", b->b, kEq); }
      case ExprKind::kNE: { const auto* b = e.as<ir::BinaryNode>(); return Bin(b->a, "!=", b->b, kEq); }
      case ExprKind::kLT: { const auto* b = e.as<ir::BinaryNode>(); return Bin(b->a, "<", b->b, kRel); }
      case ExprKind::kLE: { const auto* b = e.as<ir::BinaryNode>(); return Bin(b->a, "<=", b->b, kRel); }
      case ExprKind::kGT: { const auto* b = e.as<ir::BinaryNode>(); return Bin(b->a, ">", b->b, kRel); }
      case ExprKind::kGE: { const auto* b = e.as<ir::BinaryNode>(); return Bin(b->a, ">=", b->b, kRel); }
      case ExprKind::kAnd: { const auto* b = e.as<ir::BinaryNode>(); return Bin(b->a, "&&", b->b, kAnd); }
      case ExprKind::kOr: { const auto* b = e.as<ir::BinaryNode>(); return Bin(b->a, "||", b->b, kOr); }
      case ExprKind::kNot:
        return {"!" + Wrap(E(e.as<ir::NotNode>()->a), kUnary), kUnary};
      case ExprKind::kSelect: {
        const auto* s = e.as<ir::SelectNode>();
        return {Wrap(E(s->condition), kCond - 1) + " ? " + Wrap(E(s->true_value), kCond - 1) +
                    " : " + Wrap(E(s->false_value), kCond),
                kCond};
      }
      case ExprKind::kCast: {
        const auto* c = e.as<ir::CastNode>();
        DataType from = c->value.dtype();
        if (IsHalf(t)) {  // through float: __half has no constructor for every type
          std::string v = from == DataType::Float32() ? E(c->value).text
                                                      : "(float)" + Wrap(E(c->value), kUnary);
          return {"__float2half_rn(" + v + ")"};
        }
        if (IsHalf(from)) {
          std::string v = "__half2float(" + E(c->value).text + ")";
          if (t == DataType::Float32()) return {v};
          return {"(" + CType(t) + ")" + v, kUnary};
        }
        return {"(" + CType(t) + ")" + Wrap(E(c->value), kUnary), kUnary};
      }
      case ExprKind::kBufferLoad: {
        const auto* l = e.as<ir::BufferLoadNode>();
        return {BufName(l->buffer) + "[" + E(l->indices.at(0)).text + "]", kPrimary};
      }
      case ExprKind::kCall:
        return Call(*e.as<ir::CallNode>());
      case ExprKind::kStringImm:
      case ExprKind::kRamp:
      case ExprKind::kBroadcast:
        break;
    }
    Fail("cannot emit expression kind " + std::to_string(static_cast<int>(e.kind())) +
         " (vectors and strings do not appear in lowered code)");
  }

  Code Call(const ir::CallNode& c) {
    using ir::CallOp;
    if (c.op == CallOp::kIfThenElse) {
      return {Wrap(E(c.args[0]), kCond - 1) + " ? " + Wrap(E(c.args[1]), kCond - 1) + " : " +
                  Wrap(E(c.args[2]), kCond),
              kCond};
    }
    if (c.op == CallOp::kStorageSync) Fail("T.tvm_storage_sync used as a value");
    if (c.op == CallOp::kWarpShuffleDown) {
      // The mask names the lanes of the caller's segment, which all make the
      // call together (ir/expr.h; kShufflePrelude below).
      const std::string width = E(c.args[2]).text;
      return {"__shfl_down_sync(kiln_segment_mask(" + width + "), " + E(c.args[0]).text + ", " +
                  E(c.args[1]).text + ", " + width + ")",
              kPrimary};
    }
    DataType t = c.args.at(0).dtype();
    bool f = t.bits() == 32;
    auto math = [&](const char* base) { return Fn(std::string(base) + (f ? "f" : ""), c.args); };
    const Expr& x = c.args[0];
    switch (c.op) {
      case CallOp::kExp: return math("exp");
      case CallOp::kExp2: return math("exp2");
      case CallOp::kExp10: return math("exp10");
      case CallOp::kLog: return math("log");
      case CallOp::kLog2: return math("log2");
      case CallOp::kLog10: return math("log10");
      case CallOp::kLog1p: return math("log1p");
      case CallOp::kSqrt: return math("sqrt");
      case CallOp::kRsqrt: return math("rsqrt");
      case CallOp::kTanh: return math("tanh");
      case CallOp::kSigmoid: {
        std::string one = f ? "1.0f" : "1.0";
        return {one + " / (" + one + " + " + (f ? "expf" : "exp") + "(-" + Wrap(E(x), kUnary) +
                    "))",
                kMul};
      }
      case CallOp::kPow: return math("pow");
      case CallOp::kFabs: return math("fabs");
      case CallOp::kErf: return math("erf");
      case CallOp::kFloor: return math("floor");
      case CallOp::kCeil: return math("ceil");
      case CallOp::kRound: return math("nearbyint");  // halfway cases to even, as TVM
      case CallOp::kTrunc: return math("trunc");
      case CallOp::kSin: return math("sin");
      case CallOp::kCos: return math("cos");
      case CallOp::kTan: return math("tan");
      case CallOp::kAtan: return math("atan");
      case CallOp::kIsNan: return Fn("isnan", c.args);
      case CallOp::kIsInf: return Fn("isinf", c.args);
      case CallOp::kIsFinite: return Fn("isfinite", c.args);
      case CallOp::kFmod: return math("fmod");
      case CallOp::kIfThenElse:
      case CallOp::kStorageSync:
      case CallOp::kWarpShuffleDown:
      case CallOp::kCount_:
        break;
    }
    Fail(std::string("unsupported intrinsic T.") + ir::CallOpName(c.op));
  }

  std::unordered_map<const ir::BufferNode*, std::string> buffer_names_;
  std::unordered_map<const ir::VarNode*, std::string> var_names_;
  std::set<std::string> used_;
};

// Buffers a statement reads and writes.
class BufferUse : public ir::IRVisitor {
 public:
  std::unordered_set<const ir::BufferNode*> read, written;

 protected:
  void VisitBufferLoad(const ir::BufferLoadNode* op) override {
    read.insert(op->buffer.get());
    IRVisitor::VisitBufferLoad(op);
  }
  void VisitBufferStore(const ir::BufferStoreNode* op) override {
    written.insert(op->buffer.get());
    IRVisitor::VisitBufferStore(op);
  }
  void VisitFor(const ir::ForNode* op) override {  // a tensor-core store writes
    if (auto t = ir::AsLoweredTensorIntrin(*op)) {
      for (const auto& o : t->operands) {
        if (o.written) written.insert(o.buffer.get());
      }
    }
    IRVisitor::VisitFor(op);
  }
};

bool UsesTensorIntrin(const Stmt& s) {
  struct Finder : ir::IRVisitor {
    bool found = false;
    void VisitFor(const ir::ForNode* op) override {
      found = found || op->annotations.count(ir::kTensorIntrinAttr) > 0;
      IRVisitor::VisitFor(op);
    }
  } f;
  f.VisitStmt(s);
  return f.found;
}

int64_t Elements(const ir::Buffer& b) {
  int64_t n = 1;
  for (const auto& e : b.shape()) {
    int64_t d = 0;
    if (!ir::AsConstInt(e, &d)) return 0;
    n *= d;
  }
  return n;
}

int64_t Bytes(const ir::Buffer& b) { return Elements(b) * ((b.dtype().bits() + 7) / 8); }

constexpr const char* kPrelude = R"(// Integer division and remainder rounding toward negative infinity (the
// IR's floordiv / floormod); C's / and % truncate toward zero.
template <typename T>
__device__ __forceinline__ T kiln_floordiv(T a, T b) {
  T q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
template <typename T>
__device__ __forceinline__ T kiln_floormod(T a, T b) {
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
)";

// Only for kernels that shuffle: the lanes of the caller's segment of
// `width` consecutive lanes of its warp (T.tvm_warp_shuffle_down, ir/expr.h),
// lanes numbered by the linear thread index as CUDA forms warps.
constexpr const char* kShufflePrelude = R"(// The caller's segment of `width` consecutive lanes of its warp.
__device__ __forceinline__ unsigned kiln_segment_mask(unsigned width) {
  unsigned lane = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u;
  return width >= 32u ? 0xffffffffu : ((1u << width) - 1u) << (lane & ~(width - 1u));
}
)";

// True when `word` occurs in `text` with no identifier character on either side.
bool UsesWord(const std::string& text, const std::string& word) {
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t p = text.find(word); p != std::string::npos; p = text.find(word, p + 1)) {
    bool left = p == 0 || !ident(text[p - 1]);
    bool right = p + word.size() >= text.size() || !ident(text[p + word.size()]);
    if (left && right) return true;
  }
  return false;
}

}  // namespace

std::string CudaModule::LaunchText() const {
  std::ostringstream os;
  for (const CudaLaunch& l : launches) {
    os << "// launch " << l.kernel << "<<<dim3(" << l.grid[0] << ", " << l.grid[1] << ", "
       << l.grid[2] << "), dim3(" << l.block[0] << ", " << l.block[1] << ", " << l.block[2]
       << "), " << l.dynamic_shared_bytes << ">>>(";
    for (size_t i = 0; i < l.args.size(); ++i) {
      os << (i ? ", " : "") << buffers[static_cast<size_t>(l.args[i])].name;
    }
    os << ")\n";
  }
  return os.str();
}

CudaModule EmitCudaSource(const ir::PrimFunc& lowered) {
  ir::transform::GpuKernels ks;
  try {
    ks = ir::transform::SplitKernels(lowered);
  } catch (const ir::IRError& e) {
    Fail(e.what());
  }
  CudaModule m;
  std::vector<ir::Buffer> all = lowered.params;
  all.insert(all.end(), ks.workspace.begin(), ks.workspace.end());
  std::unordered_map<const ir::BufferNode*, std::string> global_names;
  std::set<std::string> used;
  for (size_t i = 0; i < all.size(); ++i) {
    std::string base = Sanitize(all[i].name()), n = base;
    for (int k = 1; used.count(n); ++k) n = base + "_" + std::to_string(k);
    used.insert(n);
    global_names[all[i].get()] = n;
    m.buffers.push_back({n, all[i].dtype().str(), Elements(all[i]), i >= lowered.params.size()});
  }
  std::ostringstream os;
  for (size_t k = 0; k < ks.kernels.size(); ++k) {
    const auto& kern = ks.kernels[k];
    CudaLaunch l;
    l.kernel = Sanitize(lowered.name) + "_kernel" + std::to_string(k);
    l.grid = kern.grid;
    l.block = kern.block;
    BufferUse use;
    use.VisitStmt(kern.body);
    KernelEmitter em(global_names);
    std::string params;
    for (size_t i = 0; i < all.size(); ++i) {
      const ir::BufferNode* b = all[i].get();
      if (!use.read.count(b) && !use.written.count(b)) continue;
      l.args.push_back(static_cast<int>(i));
      params += params.empty() ? "" : ", ";
      params += (use.written.count(b) ? "" : "const ") + CType(all[i].dtype()) +
                "* __restrict__ " + global_names[b];
    }
    int64_t threads = kern.block[0] * kern.block[1] * kern.block[2];
    std::ostringstream body;
    for (const auto& a : kern.launch) {
      body << "  const " << CType(a.var.dtype()) << " " << em.Bind(a.var) << " = " << a.tag
           << ";\n";
    }
    // Shared buffers: static arrays at the top; shared.dyn ones carved out of
    // the one dynamic shared array, each aligned to 16 bytes.
    int64_t dyn_offset = 0;
    // nvcuda::wmma loads and stores need 256-bit aligned pointers.
    const int64_t align = UsesTensorIntrin(kern.body) ? 32 : 16;
    for (const ir::Buffer& b : kern.shared) {
      int64_t n = Elements(b);
      if (n <= 0 || b.ndim() != 1) Fail("shared buffer '" + b.name() + "' has no constant size");
      std::string name = em.DeclareBuffer(b);
      if (b.scope() == "shared") {
        body << "  __shared__ __align__(" << align << ") " << CType(b.dtype()) << " " << name << "[" << n
             << "];\n";
        l.static_shared_bytes += Bytes(b);
      } else {
        body << "  " << CType(b.dtype()) << "* " << name << " = reinterpret_cast<"
             << CType(b.dtype()) << "*>(kiln_dynamic_shared + " << dyn_offset << ");\n";
        dyn_offset += (Bytes(b) + align - 1) / align * align;
      }
    }
    l.dynamic_shared_bytes = dyn_offset;
    em.EmitStmt(kern.body, 1, body);
    os << "\nextern \"C\" __global__ void __launch_bounds__(" << threads << ") " << l.kernel
       << "(" << params << ") {\n";
    if (dyn_offset > 0) {
      os << "  extern __shared__ __align__(" << align << ") unsigned char kiln_dynamic_shared[];\n";
    }
    os << body.str() << "}\n";
    m.launches.push_back(std::move(l));
  }
  // The headers go in only where the kernels need them (NVRTC then needs the
  // toolkit's include directory, nvrtc_compiler.h): "half" is a reserved
  // word of Sanitize, so it appears only as the type.
  const std::string kernels = os.str();
  std::string head = "// CUDA C++ generated by Kiln from " + lowered.name + ".\n";
  if (UsesWord(kernels, "half") || kernels.find("__float2half_rn") != std::string::npos ||
      kernels.find("__half2float") != std::string::npos) {
    head += "#include <cuda_fp16.h>\n";
  }
  if (kernels.find("nvcuda::wmma::") != std::string::npos) head += "#include <mma.h>\n";
  head += kPrelude;
  if (kernels.find("kiln_segment_mask(") != std::string::npos) head += kShufflePrelude;
  m.source = head + kernels + "\n" + m.LaunchText();
  return m;
}

CudaModule BuildCudaSource(const ir::PrimFunc& func, const ir::Target& target) {
  if (target.kind != ir::Target::Kind::kCUDA) {
    Fail("target " + target.ToString() + " is not a cuda target");
  }
  ir::PrimFunc lowered;
  try {
    lowered = ir::transform::Lower(func, target);
  } catch (const ir::IRError& e) {
    Fail(e.what());
  }
  std::vector<std::string> issues = ir::transform::VerifyLowered(lowered);
  std::vector<std::string> gpu =
      ir::transform::VerifyGPUCode(lowered, ir::transform::GpuLimits::FromTarget(target));
  issues.insert(issues.end(), gpu.begin(), gpu.end());
  if (!issues.empty()) {
    std::string msg = "the lowered program does not fit " + target.ToString() + ":";
    for (const auto& i : issues) msg += "\n  " + i;
    Fail(msg);
  }
  return EmitCudaSource(lowered);
}

}  // namespace kiln::codegen
