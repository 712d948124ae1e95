#include "ir/text/printer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "ir/functor.h"
#include "ir/op.h"
#include "ir/text/same_expr.h"

namespace kiln::ir {

namespace {

// Python operator precedence, lowest first. An operand printed where a
// higher level is required gets parentheses.
enum Prec : int { kOr = 1, kAnd, kNot, kCmp, kAdd, kMul, kUnary, kAtom };

const char* IterTypeFunc(IterType t) {
  switch (t) {
    case IterType::kDataPar:
      return "spatial";
    case IterType::kCommReduce:
      return "reduce";
    case IterType::kOrdered:
      return "scan";
    case IterType::kOpaque:
      return "opaque";
  }
  return "opaque";
}

bool IsTrue(const Expr& e) {
  const auto* imm = e.as<IntImmNode>();
  return imm != nullptr && e.dtype().is_bool() && imm->value != 0;
}

// Turns a name hint into a valid Python identifier.
std::string Sanitize(const std::string& hint, const char* fallback) {
  std::string s;
  for (char c : hint) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    s += ok ? c : '_';
  }
  if (s.empty()) s = fallback;
  if (s[0] >= '0' && s[0] <= '9') s = "_" + s;
  return s;
}

// Collects the variables an expression reads.
class VarCollector : public IRVisitor {
 public:
  std::unordered_set<const VarNode*> vars;

 protected:
  void VisitVar(const VarNode* v) override { vars.insert(v); }
};

// Names of variables and buffers, scoped like the parser's scopes so that
// sibling loops may reuse a name while a name is never shadowed.
class NameTable {
 public:
  NameTable() { frames_.emplace_back(); }

  void Push() { frames_.emplace_back(); }
  void Pop() {
    auto& f = frames_.back();
    for (auto it = f.rbegin(); it != f.rend(); ++it) {
      used_.erase(it->name);
      if (it->had_prev) {
        names_[it->node] = it->prev;
      } else {
        names_.erase(it->node);
      }
    }
    frames_.pop_back();
  }

  const std::string& Define(const void* node, const std::string& hint, const char* fallback) {
    return DefineIn(frames_.back(), node, hint, fallback);
  }

  // The name of a defined node; an undefined (free) one is named in the
  // outermost frame so it keeps that name.
  const std::string& Get(const void* node, const std::string& hint, const char* fallback) {
    auto it = names_.find(node);
    if (it != names_.end()) return it->second;
    return DefineIn(frames_.front(), node, hint, fallback);
  }

 private:
  struct Entry {
    const void* node;
    std::string name;
    bool had_prev;
    std::string prev;
  };

  const std::string& DefineIn(std::vector<Entry>& frame, const void* node, const std::string& hint,
                              const char* fallback) {
    std::string base = Sanitize(hint, fallback);
    std::string name = base;
    for (int i = 1; used_.count(name) || text::IsReservedName(name); ++i) {
      name = base + "_" + std::to_string(i);
    }
    used_.insert(name);
    Entry e{node, name, false, {}};
    if (auto it = names_.find(node); it != names_.end()) {
      e.had_prev = true;
      e.prev = it->second;
    }
    frame.push_back(std::move(e));
    return names_[node] = name;
  }

  std::vector<std::vector<Entry>> frames_;
  std::unordered_map<const void*, std::string> names_;
  std::unordered_set<std::string> used_;
};

class Printer {
 public:
  std::string Func(const PrimFunc& f);
  std::string ExprText(const Expr& e) { return P(e, kOr); }
  void StmtAt(const Stmt& s, int indent) { PrintStmt(s, indent); }
  std::string TakeOutput() { return std::move(out_); }

 private:
  // Expressions.
  std::string P(const Expr& e, int need);
  std::string Wrap(std::string s, int prec, int need) { return prec < need ? "(" + s + ")" : s; }
  std::string Bin(const BinaryNode* op, const char* sym, int prec, int need);
  std::string Call(const std::string& name, const std::vector<Expr>& args);
  std::string IntText(const IntImmNode* op, int need);
  std::string FloatText(const FloatImmNode* op);
  std::string VarName(const VarNode* v) { return names_.Get(v, v->name, "v"); }
  std::string BufName(const Buffer& b) { return names_.Get(b.get(), b.name(), "buf"); }
  std::string AnnValue(const Expr& e);
  std::string Dict(const Annotations& a);
  // "stop" for a [min, min + extent) range, written so the parser recovers
  // the extent node: a folded constant, the extent itself when min is 0, or
  // "min + extent".
  std::string Stop(const Expr& min, const Expr& extent);
  std::string Bounds(const Expr& min, const Expr& extent);  // "e" or "min, stop"
  std::string RegionText(const BufferRegion& r);
  std::string ShapeTuple(const std::vector<Expr>& shape);
  std::string BufferArgs(const Buffer& b, bool always_dtype);

  // Statements.
  void Line(int indent, const std::string& s) {
    out_.append(static_cast<size_t>(indent) * 4, ' ');
    out_ += s;
    out_ += '\n';
  }
  void PrintStmt(const Stmt& s, int indent);
  void PrintFor(const ForNode* op, int indent);
  void PrintBlock(const BlockRealizeNode* op, int indent);
  void PrintBlockBody(const BlockNode& b, int indent);
  bool RootElidable(const Stmt& body);

  NameTable names_;
  std::string out_;
  // Loop variables in scope with their loops, to decide on T.axis.remap.
  std::unordered_map<const VarNode*, const ForNode*> loops_;
};

std::string Printer::IntText(const IntImmNode* op, int need) {
  DataType t = op->dtype;
  if (t.is_bool()) return op->value ? "True" : "False";
  if (t == DataType::Int32() && op->value >= std::numeric_limits<int32_t>::min() &&
      op->value <= std::numeric_limits<int32_t>::max()) {
    return op->value < 0 ? Wrap(std::to_string(op->value), kUnary, need)
                         : std::to_string(op->value);
  }
  std::string v =
      t.is_uint() ? std::to_string(static_cast<uint64_t>(op->value)) : std::to_string(op->value);
  return "T." + t.str() + "(" + v + ")";
}

std::string Printer::FloatText(const FloatImmNode* op) {
  std::string v;
  if (std::isnan(op->value)) {
    v = "\"nan\"";
  } else if (std::isinf(op->value)) {
    v = op->value > 0 ? "\"inf\"" : "\"-inf\"";
  } else {
    v = PyFloatRepr(op->value);
  }
  return "T." + op->dtype.str() + "(" + v + ")";
}

std::string Printer::Call(const std::string& name, const std::vector<Expr>& args) {
  std::string s = name + "(";
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) s += ", ";
    s += P(args[i], kOr);
  }
  return s + ")";
}

std::string Printer::Bin(const BinaryNode* op, const char* sym, int prec, int need) {
  // Comparisons do not chain in the IR, so both sides of one need a higher level.
  int left_need = prec == kCmp ? prec + 1 : prec;
  return Wrap(P(op->a, left_need) + " " + sym + " " + P(op->b, prec + 1), prec, need);
}

std::string Printer::P(const Expr& e, int need) {
  if (!e.defined()) return "None";
  switch (e.kind()) {
    case ExprKind::kIntImm:
      return IntText(e.as<IntImmNode>(), need);
    case ExprKind::kFloatImm:
      return FloatText(e.as<FloatImmNode>());
    case ExprKind::kStringImm:
      return PyStringLiteral(e.as<StringImmNode>()->value);
    case ExprKind::kVar:
      return VarName(e.as<VarNode>());
    case ExprKind::kAdd:
      return Bin(e.as<BinaryNode>(), "+", kAdd, need);
    case ExprKind::kSub:
      return Bin(e.as<BinaryNode>(), "-", kAdd, need);
    case ExprKind::kMul:
      return Bin(e.as<BinaryNode>(), "*", kMul, need);
    case ExprKind::kDiv: {
      const auto* op = e.as<BinaryNode>();
      if (e.dtype().is_floating()) return Bin(op, "/", kMul, need);
      return Call("T.truncdiv", {op->a, op->b});
    }
    case ExprKind::kMod: {
      const auto* op = e.as<BinaryNode>();
      return Call("T.truncmod", {op->a, op->b});
    }
    case ExprKind::kFloorDiv:
      return Bin(e.as<BinaryNode>(), "//", kMul, need);
    case ExprKind::kFloorMod:
      return Bin(e.as<BinaryNode>(), "%", kMul, need);
    case ExprKind::kMin: {
      const auto* op = e.as<BinaryNode>();
      return Call("T.min", {op->a, op->b});
    }
    case ExprKind::kMax: {
      const auto* op = e.as<BinaryNode>();
      return Call("T.max", {op->a, op->b});
    }
    case ExprKind::kEQ:
      return Bin(e.as<BinaryNode>(), "==", kCmp, need);
    case ExprKind::kNE:
      return Bin(e.as<BinaryNode>(), "!=", kCmp, need);
    case ExprKind::kLT:
      return Bin(e.as<BinaryNode>(), "<", kCmp, need);
    case ExprKind::kLE:
      return Bin(e.as<BinaryNode>(), "<=", kCmp, need);
    case ExprKind::kGT:
      return Bin(e.as<BinaryNode>(), ">", kCmp, need);
    case ExprKind::kGE:
      return Bin(e.as<BinaryNode>(), ">=", kCmp, need);
    case ExprKind::kAnd:
      return Bin(e.as<BinaryNode>(), "and", kAnd, need);
    case ExprKind::kOr:
      return Bin(e.as<BinaryNode>(), "or", kOr, need);
    case ExprKind::kNot:
      return Wrap("not " + P(e.as<NotNode>()->a, kNot), kNot, need);
    case ExprKind::kSelect: {
      const auto* op = e.as<SelectNode>();
      return Call("T.Select", {op->condition, op->true_value, op->false_value});
    }
    case ExprKind::kCast: {
      const auto* op = e.as<CastNode>();
      return "T.Cast(\"" + e.dtype().str() + "\", " + P(op->value, kOr) + ")";
    }
    case ExprKind::kBufferLoad: {
      const auto* op = e.as<BufferLoadNode>();
      std::string s = BufName(op->buffer) + "[";
      if (op->indices.empty()) s += "()";
      for (size_t i = 0; i < op->indices.size(); ++i) {
        if (i) s += ", ";
        s += P(op->indices[i], kOr);
      }
      return s + "]";
    }
    case ExprKind::kCall: {
      const auto* op = e.as<CallNode>();
      return Call(std::string("T.") + CallOpName(op->op), op->args);
    }
    case ExprKind::kRamp: {
      const auto* op = e.as<RampNode>();
      return "T.Ramp(" + P(op->base, kOr) + ", " + P(op->stride, kOr) + ", " +
             std::to_string(op->lanes) + ")";
    }
    case ExprKind::kBroadcast: {
      const auto* op = e.as<BroadcastNode>();
      return "T.Broadcast(" + P(op->value, kOr) + ", " + std::to_string(op->lanes) + ")";
    }
  }
  return "None";
}

std::string Printer::AnnValue(const Expr& e) {
  if (e.defined() && e.dtype().is_bool() && e.as<IntImmNode>()) {
    return std::string("T.bool(") + (e.as<IntImmNode>()->value ? "True" : "False") + ")";
  }
  return P(e, kOr);
}

std::string Printer::Dict(const Annotations& a) {
  std::string s = "{";
  bool first = true;
  for (const auto& [k, v] : a) {
    if (!first) s += ", ";
    first = false;
    s += PyStringLiteral(k) + ": " + AnnValue(v);
  }
  return s + "}";
}

std::string Printer::Stop(const Expr& min, const Expr& extent) {
  int64_t lo, ext, stop;
  if (AsConstInt(min, &lo) && AsConstInt(extent, &ext) && !min.dtype().is_bool() &&
      !extent.dtype().is_bool() && !__builtin_add_overflow(lo, ext, &stop)) {
    DataType t = extent.dtype();
    bool fits = t.bits() >= 64 ||
                (t.is_int() && stop >= -(int64_t{1} << (t.bits() - 1)) &&
                 stop < (int64_t{1} << (t.bits() - 1))) ||
                (t.is_uint() && stop >= 0 && stop < (int64_t{1} << t.bits()));
    if (fits && !(t.is_uint() && t.bits() == 64 && stop < 0)) {
      IntImmNode imm(t, stop);
      return IntText(&imm, kOr);
    }
  }
  if (IsConstInt(min, 0) && !AsConstInt(extent, &ext)) return P(extent, kOr);
  return P(min, kAdd) + " + " + P(extent, kAdd + 1);
}

std::string Printer::Bounds(const Expr& min, const Expr& extent) {
  if (IsConstInt(min, 0)) return P(extent, kOr);
  return P(min, kOr) + ", " + Stop(min, extent);
}

std::string Printer::RegionText(const BufferRegion& r) {
  std::string s = BufName(r.buffer) + "[";
  if (r.region.empty()) s += "()";
  for (size_t i = 0; i < r.region.size(); ++i) {
    if (i) s += ", ";
    const Range& rg = r.region[i];
    if (IsConstInt(rg.extent, 1) && !rg.extent.dtype().is_bool()) {
      s += P(rg.min, kOr);
    } else {
      s += P(rg.min, kOr) + ":" + Stop(rg.min, rg.extent);
    }
  }
  return s + "]";
}

std::string Printer::ShapeTuple(const std::vector<Expr>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += P(shape[i], kOr);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::string Printer::BufferArgs(const Buffer& b, bool always_dtype) {
  std::string s = ShapeTuple(b.shape());
  if (always_dtype || b.dtype() != DataType::Float32()) s += ", \"" + b.dtype().str() + "\"";
  if (b->scope != "global") s += ", scope=" + PyStringLiteral(b->scope);
  if (!b->strides.empty()) s += ", strides=" + ShapeTuple(b->strides);
  if (b->align != 0) s += ", align=" + std::to_string(b->align);
  return s;
}

void Printer::PrintStmt(const Stmt& s, int indent) {
  if (!s.defined()) {
    Line(indent, "T.evaluate(0)  # undefined statement");
    return;
  }
  switch (s.kind()) {
    case StmtKind::kFor:
      return PrintFor(s.as<ForNode>(), indent);
    case StmtKind::kBlockRealize:
      return PrintBlock(s.as<BlockRealizeNode>(), indent);
    case StmtKind::kBufferStore: {
      const auto* op = s.as<BufferStoreNode>();
      std::string lhs = BufName(op->buffer) + "[";
      if (op->indices.empty()) lhs += "()";
      for (size_t i = 0; i < op->indices.size(); ++i) {
        if (i) lhs += ", ";
        lhs += P(op->indices[i], kOr);
      }
      Line(indent, lhs + "] = " + P(op->value, kOr));
      return;
    }
    case StmtKind::kSeqStmt:
      for (const auto& c : s.as<SeqStmtNode>()->seq) PrintStmt(c, indent);
      return;
    case StmtKind::kIfThenElse: {
      const auto* op = s.as<IfThenElseNode>();
      Line(indent, "if " + P(op->condition, kOr) + ":");
      PrintStmt(op->then_case, indent + 1);
      if (op->else_case.defined()) {
        Line(indent, "else:");
        PrintStmt(op->else_case, indent + 1);
      }
      return;
    }
    case StmtKind::kEvaluate:
      Line(indent, "T.evaluate(" + P(s.as<EvaluateNode>()->value, kOr) + ")");
      return;
  }
}

void Printer::PrintFor(const ForNode* op, int indent) {
  auto plain = [](const ForNode* f) {
    return f->for_kind == ForKind::kSerial && f->annotations.empty() && IsConstInt(f->min, 0) &&
           !f->min.dtype().is_bool();
  };
  // Gather a chain of plain loops for T.grid; a loop whose extent reads an
  // earlier loop variable of the chain ends it (T.grid evaluates all extents
  // before binding any variable).
  std::vector<const ForNode*> chain{op};
  if (plain(op)) {
    std::unordered_set<const VarNode*> chain_vars{op->loop_var.get()};
    while (const auto* next = chain.back()->body.as<ForNode>()) {
      if (!plain(next)) break;
      VarCollector c;
      c.VisitExpr(next->extent);
      bool depends = false;
      for (const auto* v : c.vars) depends |= chain_vars.count(v) > 0;
      if (depends) break;
      chain.push_back(next);
      chain_vars.insert(next->loop_var.get());
    }
  }
  std::string head;
  if (chain.size() > 1) {
    std::string extents;
    for (size_t i = 0; i < chain.size(); ++i) {
      if (i) extents += ", ";
      extents += P(chain[i]->extent, kOr);
    }
    names_.Push();
    std::string vars;
    for (size_t i = 0; i < chain.size(); ++i) {
      if (i) vars += ", ";
      vars += names_.Define(chain[i]->loop_var.get(), chain[i]->loop_var.name(), "i");
    }
    head = "for " + vars + " in T.grid(" + extents + "):";
  } else {
    std::string iter;
    if (plain(op)) {
      iter = "range(" + P(op->extent, kOr) + ")";
    } else if (op->for_kind == ForKind::kSerial && op->annotations.empty()) {
      iter = "range(" + Bounds(op->min, op->extent) + ")";
    } else {
      iter = std::string("T.") + ForKindName(op->for_kind) + "(" + Bounds(op->min, op->extent);
      if (op->for_kind == ForKind::kThreadBinding) {
        iter += ", thread=" + PyStringLiteral(op->thread_tag);
      }
      if (!op->annotations.empty()) iter += ", annotations=" + Dict(op->annotations);
      iter += ")";
    }
    names_.Push();
    head =
        "for " + names_.Define(op->loop_var.get(), op->loop_var.name(), "i") + " in " + iter + ":";
  }
  Line(indent, head);
  for (const auto* f : chain) loops_[f->loop_var.get()] = f;
  PrintStmt(chain.back()->body, indent + 1);
  for (const auto* f : chain) loops_.erase(f->loop_var.get());
  names_.Pop();
}

void Printer::PrintBlock(const BlockRealizeNode* op, int indent) {
  const BlockNode& b = *op->block.get();
  Line(indent, "with T.block(" + PyStringLiteral(b.name) + "):");
  ++indent;
  // Bindings are printed before the iteration variables they bind exist.
  std::vector<std::string> bindings;
  for (const auto& v : op->iter_values) bindings.push_back(P(v, kOr));
  bool remap = !b.iter_vars.empty() && b.iter_vars.size() == op->iter_values.size();
  for (size_t i = 0; remap && i < b.iter_vars.size(); ++i) {
    const IterVar& iv = b.iter_vars[i];
    const auto* v = op->iter_values[i].as<VarNode>();
    auto it = v ? loops_.find(v) : loops_.end();
    remap = it != loops_.end() &&
            (iv.iter_type == IterType::kDataPar || iv.iter_type == IterType::kCommReduce) &&
            IsConstInt(iv.dom.min, 0) && IsConstInt(it->second->min, 0) &&
            text::SameExpr(iv.dom.extent, it->second->extent) && iv.var.dtype() == v->dtype;
  }
  names_.Push();
  if (remap) {
    std::string lhs, kinds, rhs;
    for (size_t i = 0; i < b.iter_vars.size(); ++i) {
      if (i) {
        lhs += ", ";
        rhs += ", ";
      }
      const IterVar& iv = b.iter_vars[i];
      lhs += names_.Define(iv.var.get(), iv.var.name(), "v");
      kinds += iv.iter_type == IterType::kDataPar ? "S" : "R";
      rhs += bindings[i];
    }
    Line(indent, lhs + " = T.axis.remap(\"" + kinds + "\", [" + rhs + "])");
  } else {
    for (size_t i = 0; i < b.iter_vars.size(); ++i) {
      const IterVar& iv = b.iter_vars[i];
      std::string dom = IsConstInt(iv.dom.min, 0) ? P(iv.dom.extent, kOr)
                                                  : "(" + P(iv.dom.min, kOr) + ", " +
                                                        Stop(iv.dom.min, iv.dom.extent) + ")";
      std::string binding = i < bindings.size() ? bindings[i] : "None";
      Line(indent, names_.Define(iv.var.get(), iv.var.name(), "v") + " = T.axis." +
                       IterTypeFunc(iv.iter_type) + "(" + dom + ", " + binding + ")");
    }
  }
  if (op->predicate.defined() && !IsTrue(op->predicate)) {
    Line(indent, "T.where(" + P(op->predicate, kOr) + ")");
  }
  PrintBlockBody(b, indent);
  names_.Pop();
}

// Everything of a block after its iteration variables and predicate.
void Printer::PrintBlockBody(const BlockNode& b, int indent) {
  auto regions = [&](const std::vector<BufferRegion>& rs) {
    std::string s;
    for (size_t i = 0; i < rs.size(); ++i) {
      if (i) s += ", ";
      s += RegionText(rs[i]);
    }
    return s;
  };
  Line(indent, "T.reads(" + regions(b.reads) + ")");
  Line(indent, "T.writes(" + regions(b.writes) + ")");
  if (!b.annotations.empty()) Line(indent, "T.block_attr(" + Dict(b.annotations) + ")");
  for (const auto& buf : b.alloc_buffers) {
    std::string args = BufferArgs(buf, false);
    Line(indent, names_.Define(buf.get(), buf.name(), "buf") + " = T.alloc_buffer(" + args + ")");
  }
  if (b.init) {
    Line(indent, "with T.init():");
    PrintStmt(*b.init, indent + 1);
  }
  PrintStmt(b.body, indent);
}

bool Printer::RootElidable(const Stmt& body) {
  const auto* r = body.as<BlockRealizeNode>();
  if (r == nullptr || !r->block.defined()) return false;
  const BlockNode& b = *r->block.get();
  if (b.name != "root" || !b.iter_vars.empty() || !r->iter_values.empty() ||
      !IsTrue(r->predicate) || !b.reads.empty() || !b.writes.empty() || b.init ||
      !b.annotations.empty()) {
    return false;
  }
  // Without allocations at function level, a lone inner block named "root"
  // would be read back as the explicit root block.
  const auto* inner = b.body.as<BlockRealizeNode>();
  return !b.alloc_buffers.empty() || inner == nullptr || !inner->block.defined() ||
         inner->block->name != "root";
}

std::string Printer::Func(const PrimFunc& f) {
  std::string params;
  for (size_t i = 0; i < f.params.size(); ++i) {
    const Buffer& b = f.params[i];
    std::string args = BufferArgs(b, true);
    if (i) params += ", ";
    params += names_.Define(b.get(), b.name(), "buf") + ": T.Buffer(" + args + ")";
  }
  std::string fname = Sanitize(f.name, "main");
  if (text::IsReservedName(fname)) fname += "_";
  out_ += "# from tvm.script import tir as T\n\n@T.prim_func\n";
  out_ += "def " + fname + "(" + params + "):\n";
  if (!f.attrs.empty()) Line(1, "T.func_attr(" + Dict(f.attrs) + ")");
  if (RootElidable(f.body)) {
    const BlockNode& root = *f.body.as<BlockRealizeNode>()->block.get();
    Line(1, "# with T.block(\"root\"):");
    for (const auto& buf : root.alloc_buffers) {
      std::string args = BufferArgs(buf, false);
      Line(1, names_.Define(buf.get(), buf.name(), "buf") + " = T.alloc_buffer(" + args + ")");
    }
    PrintStmt(root.body, 1);
  } else {
    PrintStmt(f.body, 1);
  }
  return std::move(out_);
}

}  // namespace

std::string PyFloatRepr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string s(buf, res.ptr);  // "-1.2345e+20": shortest round-trip digits
  std::string sign;
  if (s[0] == '-') {
    sign = "-";
    s.erase(0, 1);
  }
  size_t epos = s.find('e');
  int exp = std::stoi(s.substr(epos + 1));
  std::string digits;
  for (char c : s.substr(0, epos)) {
    if (c != '.') digits += c;
  }
  int n = static_cast<int>(digits.size());
  std::string out;
  if (exp >= -4 && exp < 16) {
    if (exp >= 0) {
      if (n <= exp + 1) {
        out = digits + std::string(static_cast<size_t>(exp + 1 - n), '0') + ".0";
      } else {
        out = digits.substr(0, static_cast<size_t>(exp + 1)) + "." +
              digits.substr(static_cast<size_t>(exp + 1));
      }
    } else {
      out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    }
  } else {
    out = digits.substr(0, 1);
    if (n > 1) out += "." + digits.substr(1);
    char e[16];
    std::snprintf(e, sizeof(e), "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    out += e;
  }
  return sign + out;
}

std::string PyStringLiteral(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char h[8];
          std::snprintf(h, sizeof(h), "\\x%02x", c);
          out += h;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string ToText(const PrimFunc& f) { return Printer().Func(f); }

std::string ToText(const Expr& e) { return Printer().ExprText(e); }

std::string ToText(const Stmt& s) {
  Printer p;
  p.StmtAt(s, 0);
  return p.TakeOutput();
}

}  // namespace kiln::ir
