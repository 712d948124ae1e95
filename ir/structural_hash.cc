// StructuralHash: xxHash64 (seed 0) over a canonical byte stream.
//
// THE STREAM BELOW IS THE DATABASE KEY FORMAT. Changing any byte of it (a tag
// value, a field's order or width, what is or is not included) changes every
// stored workload hash; do it only together with a bump of kFormatMagic and a
// database migration. The enums of the IR are never written raw: every tag is
// spelled out here, so reordering an enum in the core IR cannot move a hash.
//
// Primitives (all little-endian, independent of the host):
//   u8, u16, u32, u64   fixed-width unsigned integers
//   i64                 two's complement, as u64
//   str                 u32 byte length, then the bytes (no terminator)
//   count               u32 number of elements that follow
//   dtype               u8 code (int 0, uint 1, float 2, bfloat 3, bool 4,
//                       handle 5), u8 bits, u16 lanes
//
// Stream := "KILNSH01" (8 bytes, the format magic), u8 root, then
//   root 0x01: Func    root 0x02: Expr    root 0x03: Stmt
//
// Func := count, BufDef per parameter (in order), Annots (attrs), Stmt (body).
//         The function's name is not part of the stream.
//
// Variables and buffers. Definitions are numbered 0, 1, 2, ... in stream
// order (one counter for variables, one for buffers; numbers are never reused,
// even after a definition goes out of scope). A use writes the number of the
// definition in scope; a use with no definition in scope is free and writes
// the number of its first free use instead (separate counters again).
//   VarDef := 0x00 if undefined, else 0x60, dtype. (The name is not written.)
//   BufDef := 0x00 if undefined, else 0x61, BufBody.
//   BufBody := dtype, count, Expr per shape extent, count, Expr per stride,
//              str scope, i64 align.      (The name is not written.)
//   BufRef := 0x00 if undefined
//           | 0x62, u32 definition number
//           | 0x63, u32 free number, then BufBody only at the buffer's first
//             free use.
// Scopes: a loop variable is defined for its loop's body; a block's iteration
// variables and alloc_buffers for the rest of that block; parameters for the
// whole function.
//
// Expr := 0x00 if undefined, else u8 tag, dtype, fields:
//   0x10 IntImm     i64 value
//   0x11 FloatImm   u64 IEEE-754 bits of the double value; every NaN is
//                   written as 0x7ff8000000000000 (so NaNs are one value, and
//                   -0.0 differs from 0.0)
//   0x12 StringImm  str value
//   0x13 Var        bound use: u32 definition number
//   0x14 Var        free use: u32 free number
//   0x20 Add 0x21 Sub 0x22 Mul 0x23 Div 0x24 Mod 0x25 FloorDiv 0x26 FloorMod
//   0x27 Min 0x28 Max 0x29 EQ 0x2a NE 0x2b LT 0x2c LE 0x2d GT 0x2e GE
//   0x2f And 0x30 Or           Expr a, Expr b
//   0x31 Not        Expr a
//   0x32 Select     Expr condition, Expr true_value, Expr false_value
//   0x33 Cast       Expr value
//   0x34 BufferLoad BufRef, count, Expr per index
//   0x35 Call       u8 op (CallOpTag below), count, Expr per argument
//   0x36 Ramp       Expr base, Expr stride, u32 lanes
//   0x37 Broadcast  Expr value, u32 lanes
//
// Stmt := 0x00 if undefined, else u8 tag, fields:
//   0x50 For          Expr min, Expr extent, u8 kind (serial 0, parallel 1,
//                     vectorized 2, unrolled 3, thread_binding 4),
//                     str thread_tag, Annots, VarDef loop_var, Stmt body
//   0x51 BlockRealize if the block is undefined: 0x00, count, Expr per
//                     binding, Expr predicate. Otherwise 0x01 then
//                     str block name, count iter vars, count bindings,
//                     Expr per binding, Expr predicate,
//                     per iter var: u8 iter type (S 0, R 1, O 2, X 3),
//                       Expr dom.min, Expr dom.extent, VarDef,
//                     count, BufDef per alloc buffer,
//                     count, Region per read, count, Region per write,
//                     u8 0 (no init) | u8 1, Stmt init,
//                     Stmt body, Annots
//   0x52 BufferStore  BufRef, Expr value, count, Expr per index
//   0x53 SeqStmt      count, Stmt per element
//   0x54 IfThenElse   Expr condition, Stmt then, Stmt else (0x00 if none)
//   0x55 Evaluate     Expr value
//   Region := BufRef, count, (Expr min, Expr extent) per dimension
//   Annots := count, (str key, Expr value) per entry in ascending key order
//
// Every construct starts with a tag or a count whose meaning is fixed by what
// precedes it, so the stream is prefix-free: two programs have the same stream
// exactly when they are structurally equal with free variables and buffers
// matched at their first use (which is how StructuralEqual treats functions;
// for fragments it compares free ones by identity, which is stricter). Equal
// programs therefore hash equal.

#include "ir/structural_hash.h"

#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/buffer.h"
#include "ir/error.h"
#include "ir/scoped_bindings.h"

namespace kiln::ir {

namespace {

constexpr char kFormatMagic[8] = {'K', 'I', 'L', 'N', 'S', 'H', '0', '1'};

enum Tag : uint8_t {
  kNull = 0x00,
  kRootFunc = 0x01,
  kRootExpr = 0x02,
  kRootStmt = 0x03,
  kIntImm = 0x10,
  kFloatImm = 0x11,
  kStringImm = 0x12,
  kVarBound = 0x13,
  kVarFree = 0x14,
  kAdd = 0x20,
  kSub = 0x21,
  kMul = 0x22,
  kDiv = 0x23,
  kMod = 0x24,
  kFloorDiv = 0x25,
  kFloorMod = 0x26,
  kMin = 0x27,
  kMax = 0x28,
  kEQ = 0x29,
  kNE = 0x2a,
  kLT = 0x2b,
  kLE = 0x2c,
  kGT = 0x2d,
  kGE = 0x2e,
  kAnd = 0x2f,
  kOr = 0x30,
  kNot = 0x31,
  kSelect = 0x32,
  kCast = 0x33,
  kBufferLoad = 0x34,
  kCall = 0x35,
  kRamp = 0x36,
  kBroadcast = 0x37,
  kFor = 0x50,
  kBlockRealize = 0x51,
  kBufferStore = 0x52,
  kSeqStmt = 0x53,
  kIfThenElse = 0x54,
  kEvaluate = 0x55,
  kVarDef = 0x60,
  kBufDef = 0x61,
  kBufBound = 0x62,
  kBufFree = 0x63,
};

uint8_t ExprTag(ExprKind k) {
  switch (k) {
    case ExprKind::kIntImm: return kIntImm;
    case ExprKind::kFloatImm: return kFloatImm;
    case ExprKind::kStringImm: return kStringImm;
    case ExprKind::kVar: return kVarBound;  // refined by the caller
    case ExprKind::kAdd: return kAdd;
    case ExprKind::kSub: return kSub;
    case ExprKind::kMul: return kMul;
    case ExprKind::kDiv: return kDiv;
    case ExprKind::kMod: return kMod;
    case ExprKind::kFloorDiv: return kFloorDiv;
    case ExprKind::kFloorMod: return kFloorMod;
    case ExprKind::kMin: return kMin;
    case ExprKind::kMax: return kMax;
    case ExprKind::kEQ: return kEQ;
    case ExprKind::kNE: return kNE;
    case ExprKind::kLT: return kLT;
    case ExprKind::kLE: return kLE;
    case ExprKind::kGT: return kGT;
    case ExprKind::kGE: return kGE;
    case ExprKind::kAnd: return kAnd;
    case ExprKind::kOr: return kOr;
    case ExprKind::kNot: return kNot;
    case ExprKind::kSelect: return kSelect;
    case ExprKind::kCast: return kCast;
    case ExprKind::kBufferLoad: return kBufferLoad;
    case ExprKind::kCall: return kCall;
    case ExprKind::kRamp: return kRamp;
    case ExprKind::kBroadcast: return kBroadcast;
  }
  throw IRError("structural hash: unknown expression kind " + std::to_string(static_cast<int>(k)));
}

uint8_t CodeTag(DataType::Code c) {
  switch (c) {
    case DataType::Code::kInt: return 0;
    case DataType::Code::kUInt: return 1;
    case DataType::Code::kFloat: return 2;
    case DataType::Code::kBFloat: return 3;
    case DataType::Code::kBool: return 4;
    case DataType::Code::kHandle: return 5;
  }
  throw IRError("structural hash: unknown data type code " + std::to_string(static_cast<int>(c)));
}

uint8_t ForKindTag(ForKind k) {
  switch (k) {
    case ForKind::kSerial: return 0;
    case ForKind::kParallel: return 1;
    case ForKind::kVectorized: return 2;
    case ForKind::kUnrolled: return 3;
    case ForKind::kThreadBinding: return 4;
  }
  throw IRError("structural hash: unknown loop kind " + std::to_string(static_cast<int>(k)));
}

uint8_t IterTypeTag(IterType t) {
  switch (t) {
    case IterType::kDataPar: return 0;
    case IterType::kCommReduce: return 1;
    case IterType::kOrdered: return 2;
    case IterType::kOpaque: return 3;
  }
  throw IRError("structural hash: unknown iteration type " + std::to_string(static_cast<int>(t)));
}

// Fixed codes for the intrinsics, independent of CallOp's declaration order.
uint8_t CallOpTag(CallOp op) {
  switch (op) {
    case CallOp::kIfThenElse: return 0;
    case CallOp::kExp: return 1;
    case CallOp::kExp2: return 2;
    case CallOp::kExp10: return 3;
    case CallOp::kLog: return 4;
    case CallOp::kLog2: return 5;
    case CallOp::kLog10: return 6;
    case CallOp::kLog1p: return 7;
    case CallOp::kSqrt: return 8;
    case CallOp::kRsqrt: return 9;
    case CallOp::kTanh: return 10;
    case CallOp::kSigmoid: return 11;
    case CallOp::kPow: return 12;
    case CallOp::kFabs: return 13;
    case CallOp::kErf: return 14;
    case CallOp::kFloor: return 15;
    case CallOp::kCeil: return 16;
    case CallOp::kRound: return 17;
    case CallOp::kTrunc: return 18;
    case CallOp::kSin: return 19;
    case CallOp::kCos: return 20;
    case CallOp::kTan: return 21;
    case CallOp::kAtan: return 22;
    case CallOp::kIsNan: return 23;
    case CallOp::kIsInf: return 24;
    case CallOp::kIsFinite: return 25;
    case CallOp::kFmod: return 26;
    case CallOp::kStorageSync: return 27;
    case CallOp::kWarpShuffleDown: return 28;
    case CallOp::kCount_: break;
  }
  throw IRError("structural hash: call of unknown intrinsic " +
                std::to_string(static_cast<int>(op)));
}

uint64_t CanonicalFloatBits(double v) {
  if (v != v) return 0x7ff8000000000000ULL;
  return std::bit_cast<uint64_t>(v);
}

uint32_t Count(size_t n) {
  if (n > UINT32_MAX) throw IRError("structural hash: more than 2^32 elements in one list");
  return static_cast<uint32_t>(n);
}

// Collects the stream in a fixed buffer and feeds xxHash in chunks. Small
// streams (most expressions) are hashed in one shot without a hash state.
class ByteSink {
 public:
  ByteSink() = default;
  ByteSink(const ByteSink&) = delete;
  ByteSink& operator=(const ByteSink&) = delete;
  ~ByteSink() {
    if (state_ != nullptr) XXH64_freeState(state_);
  }

  void U8(uint8_t v) {
    if (n_ + 1 > kCapacity) Flush();
    buf_[n_++] = v;
  }
  void U16(uint16_t v) { Le(v, 2); }
  void U32(uint32_t v) { Le(v, 4); }
  void U64(uint64_t v) { Le(v, 8); }
  void I64(int64_t v) { Le(static_cast<uint64_t>(v), 8); }
  void Str(std::string_view s) {
    U32(Count(s.size()));
    const char* p = s.data();
    size_t left = s.size();
    while (left > 0) {
      if (n_ == kCapacity) Flush();
      size_t k = std::min(left, kCapacity - n_);
      std::memcpy(buf_ + n_, p, k);
      n_ += k;
      p += k;
      left -= k;
    }
  }
  void Bytes(const char* p, size_t k) {
    if (n_ + k > kCapacity) Flush();
    std::memcpy(buf_ + n_, p, k);
    n_ += k;
  }

  uint64_t Finish() {
    if (state_ == nullptr) return XXH64(buf_, n_, 0);
    XXH64_update(state_, buf_, n_);
    n_ = 0;
    return XXH64_digest(state_);
  }

 private:
  static constexpr size_t kCapacity = 8192;

  void Le(uint64_t v, int bytes) {
    if (n_ + bytes > kCapacity) Flush();
    for (int i = 0; i < bytes; ++i) buf_[n_++] = static_cast<unsigned char>(v >> (8 * i));
  }
  void Flush() {
    if (state_ == nullptr) {
      state_ = XXH64_createState();
      if (state_ == nullptr) throw std::bad_alloc();
      XXH64_reset(state_, 0);
    }
    XXH64_update(state_, buf_, n_);
    n_ = 0;
  }

  unsigned char buf_[kCapacity];
  size_t n_ = 0;
  XXH64_state_t* state_ = nullptr;
};

// Definition numbers of the nodes in scope (ir/scoped_bindings.h): a scope's
// bindings are popped when it closes, which uncovers any definition they
// shadowed.
template <typename Node>
class ScopedNumbers {
 public:
  const uint32_t* Find(const Node* n) const {
    const size_t k = numbers_.Innermost(0, n);
    return k == Numbers::kNotBound ? nullptr : &numbers_.payload(k);
  }
  void Bind(const Node* n, uint32_t number) { numbers_.Bind({n}, number); }
  size_t Mark() const { return numbers_.Mark(); }
  void PopTo(size_t mark) { numbers_.PopTo(mark); }

 private:
  using Numbers = ScopedBindings<Node, 1, uint32_t>;
  Numbers numbers_;
};

class Hasher {
 public:
  uint64_t Func(const PrimFunc& f) {
    Header(kRootFunc);
    out_.U32(Count(f.params.size()));
    for (const Buffer& p : f.params) DefBuffer(p);
    Annots(f.attrs);
    S(f.body);
    return out_.Finish();
  }
  uint64_t RootExpr(const Expr& e) {
    Header(kRootExpr);
    E(e);
    return out_.Finish();
  }
  uint64_t RootStmt(const Stmt& s) {
    Header(kRootStmt);
    S(s);
    return out_.Finish();
  }

 private:
  void Header(uint8_t root) {
    out_.Bytes(kFormatMagic, sizeof(kFormatMagic));
    out_.U8(root);
  }

  void DType(DataType t) {
    out_.U8(CodeTag(t.code()));
    out_.U8(static_cast<uint8_t>(t.bits()));
    out_.U16(static_cast<uint16_t>(t.lanes()));
  }

  void DefVar(const Var& v) {
    if (!v.defined()) {
      out_.U8(kNull);
      return;
    }
    out_.U8(kVarDef);
    DType(v.dtype());
    vars_.Bind(v.get(), next_var_++);
  }

  void UseVar(const VarNode* v) {
    if (const uint32_t* n = vars_.Find(v)) {
      out_.U8(kVarBound);
      DType(v->dtype);
      out_.U32(*n);
      return;
    }
    auto [it, inserted] = free_vars_.try_emplace(v, Count(free_vars_.size()));
    out_.U8(kVarFree);
    DType(v->dtype);
    out_.U32(it->second);
  }

  void BufBody(const BufferNode& b) {
    DType(b.dtype);
    out_.U32(Count(b.shape.size()));
    for (const Expr& e : b.shape) E(e);
    out_.U32(Count(b.strides.size()));
    for (const Expr& e : b.strides) E(e);
    out_.Str(b.scope);
    out_.I64(b.align);
  }

  void DefBuffer(const Buffer& b) {
    if (!b.defined()) {
      out_.U8(kNull);
      return;
    }
    out_.U8(kBufDef);
    BufBody(*b.get());
    bufs_.Bind(b.get(), next_buf_++);
  }

  void UseBuffer(const Buffer& b) {
    if (!b.defined()) {
      out_.U8(kNull);
      return;
    }
    if (const uint32_t* n = bufs_.Find(b.get())) {
      out_.U8(kBufBound);
      out_.U32(*n);
      return;
    }
    auto [it, inserted] = free_bufs_.try_emplace(b.get(), Count(free_bufs_.size()));
    out_.U8(kBufFree);
    out_.U32(it->second);
    if (inserted) BufBody(*b.get());
  }

  void Annots(const Annotations& a) {
    out_.U32(Count(a.size()));
    for (const auto& [key, value] : a) {
      out_.Str(key);
      E(value);
    }
  }

  void Exprs(const std::vector<Expr>& v) {
    out_.U32(Count(v.size()));
    for (const Expr& e : v) E(e);
  }

  void E(const Expr& e) {
    const ExprNode* n = e.get();
    if (n == nullptr) {
      out_.U8(kNull);
      return;
    }
    if (n->kind == ExprKind::kVar) return UseVar(static_cast<const VarNode*>(n));
    out_.U8(ExprTag(n->kind));
    DType(n->dtype);
    switch (n->kind) {
      case ExprKind::kIntImm: out_.I64(static_cast<const IntImmNode*>(n)->value); return;
      case ExprKind::kFloatImm:
        out_.U64(CanonicalFloatBits(static_cast<const FloatImmNode*>(n)->value));
        return;
      case ExprKind::kStringImm: out_.Str(static_cast<const StringImmNode*>(n)->value); return;
      case ExprKind::kNot: E(static_cast<const NotNode*>(n)->a); return;
      case ExprKind::kSelect: {
        const auto* op = static_cast<const SelectNode*>(n);
        E(op->condition);
        E(op->true_value);
        E(op->false_value);
        return;
      }
      case ExprKind::kCast: E(static_cast<const CastNode*>(n)->value); return;
      case ExprKind::kBufferLoad: {
        const auto* op = static_cast<const BufferLoadNode*>(n);
        UseBuffer(op->buffer);
        Exprs(op->indices);
        return;
      }
      case ExprKind::kCall: {
        const auto* op = static_cast<const CallNode*>(n);
        out_.U8(CallOpTag(op->op));
        Exprs(op->args);
        return;
      }
      case ExprKind::kRamp: {
        const auto* op = static_cast<const RampNode*>(n);
        E(op->base);
        E(op->stride);
        out_.U32(static_cast<uint32_t>(op->lanes));
        return;
      }
      case ExprKind::kBroadcast: {
        const auto* op = static_cast<const BroadcastNode*>(n);
        E(op->value);
        out_.U32(static_cast<uint32_t>(op->lanes));
        return;
      }
      case ExprKind::kVar: return;  // handled above
      default: {
        const auto* op = static_cast<const BinaryNode*>(n);
        E(op->a);
        E(op->b);
        return;
      }
    }
  }

  void Region(const BufferRegion& r) {
    UseBuffer(r.buffer);
    out_.U32(Count(r.region.size()));
    for (const Range& range : r.region) {
      E(range.min);
      E(range.extent);
    }
  }

  void S(const Stmt& s) {
    const StmtNode* n = s.get();
    if (n == nullptr) {
      out_.U8(kNull);
      return;
    }
    switch (n->kind) {
      case StmtKind::kFor: {
        const auto* op = static_cast<const ForNode*>(n);
        out_.U8(kFor);
        E(op->min);
        E(op->extent);
        out_.U8(ForKindTag(op->for_kind));
        out_.Str(op->thread_tag);
        Annots(op->annotations);
        size_t mark = vars_.Mark();
        DefVar(op->loop_var);
        S(op->body);
        vars_.PopTo(mark);
        return;
      }
      case StmtKind::kBlockRealize: return Realize(static_cast<const BlockRealizeNode*>(n));
      case StmtKind::kBufferStore: {
        const auto* op = static_cast<const BufferStoreNode*>(n);
        out_.U8(kBufferStore);
        UseBuffer(op->buffer);
        E(op->value);
        Exprs(op->indices);
        return;
      }
      case StmtKind::kSeqStmt: {
        const auto* op = static_cast<const SeqStmtNode*>(n);
        out_.U8(kSeqStmt);
        out_.U32(Count(op->seq.size()));
        for (const Stmt& x : op->seq) S(x);
        return;
      }
      case StmtKind::kIfThenElse: {
        const auto* op = static_cast<const IfThenElseNode*>(n);
        out_.U8(kIfThenElse);
        E(op->condition);
        S(op->then_case);
        S(op->else_case);
        return;
      }
      case StmtKind::kEvaluate:
        out_.U8(kEvaluate);
        E(static_cast<const EvaluateNode*>(n)->value);
        return;
    }
    throw IRError("structural hash: unknown statement kind " +
                  std::to_string(static_cast<int>(n->kind)));
  }

  void Realize(const BlockRealizeNode* op) {
    out_.U8(kBlockRealize);
    const BlockNode* b = op->block.get();
    if (b == nullptr) {
      out_.U8(0);
      Exprs(op->iter_values);
      E(op->predicate);
      return;
    }
    out_.U8(1);
    out_.Str(b->name);
    out_.U32(Count(b->iter_vars.size()));
    Exprs(op->iter_values);
    E(op->predicate);
    size_t var_mark = vars_.Mark(), buf_mark = bufs_.Mark();
    for (const IterVar& iv : b->iter_vars) {
      out_.U8(IterTypeTag(iv.iter_type));
      E(iv.dom.min);
      E(iv.dom.extent);
      DefVar(iv.var);
    }
    out_.U32(Count(b->alloc_buffers.size()));
    for (const Buffer& buf : b->alloc_buffers) DefBuffer(buf);
    out_.U32(Count(b->reads.size()));
    for (const BufferRegion& r : b->reads) Region(r);
    out_.U32(Count(b->writes.size()));
    for (const BufferRegion& r : b->writes) Region(r);
    if (b->init) {
      out_.U8(1);
      S(*b->init);
    } else {
      out_.U8(0);
    }
    S(b->body);
    Annots(b->annotations);
    vars_.PopTo(var_mark);
    bufs_.PopTo(buf_mark);
  }

  ByteSink out_;
  ScopedNumbers<VarNode> vars_;
  ScopedNumbers<BufferNode> bufs_;
  uint32_t next_var_ = 0;
  uint32_t next_buf_ = 0;
  std::unordered_map<const VarNode*, uint32_t> free_vars_;
  std::unordered_map<const BufferNode*, uint32_t> free_bufs_;
};

}  // namespace

uint64_t StructuralHash(const PrimFunc& f) { return Hasher().Func(f); }
uint64_t StructuralHash(const Expr& e) { return Hasher().RootExpr(e); }
uint64_t StructuralHash(const Stmt& s) { return Hasher().RootStmt(s); }

std::string StructuralHashHex(uint64_t hash) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i) {
    s[i] = kDigits[hash & 0xf];
    hash >>= 4;
  }
  return s;
}

std::string StructuralHashHex(const PrimFunc& f) { return StructuralHashHex(StructuralHash(f)); }

}  // namespace kiln::ir
