#include "ir/parser.h"

#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <unordered_map>

#include "ir/functor.h"
#include "ir/op.h"
#include "ir/text/lexer.h"
#include "ir/text/same_expr.h"

namespace kiln::ir {

namespace {

using text::Token;
using text::TokKind;

// Depth of a built expression tree: a long operator chain nests without
// recursion here, but printing and destroying it recurse.
constexpr int kMaxExprDepth = 200;
// Recursion of the expression parser (parentheses, calls, unary operators).
// Printing a tree of depth d nests at most 2 d + a few levels (a parenthesis
// or a call per node), so everything printed parses again.
constexpr int kMaxNesting = 2 * kMaxExprDepth + 20;

struct Symbol {
  enum Kind { kVar, kBuffer, kHandle } kind = kVar;
  Var var;
  Buffer buffer;
  int param = -1;  // kHandle: index into the parameter list
};

// A Python value as a call argument: an expression, a string, a tuple or
// list, or a dict with string keys.
struct PyValue {
  enum Kind { kExpr, kString, kTuple, kList, kDict } kind = kExpr;
  Token tok;  // where it starts
  Expr expr;
  std::string str;
  std::vector<PyValue> items;     // tuple and list elements; dict values
  std::vector<std::string> keys;  // dict keys, one per item
};

struct Arg {
  std::string kw;  // empty: positional
  PyValue value;
};

// What the statements directly inside one block declare.
struct BlockMeta {
  Token tok;
  std::string name;
  std::vector<IterVar> iter_vars;
  std::vector<Expr> bindings;
  std::optional<Expr> predicate;
  std::optional<std::vector<BufferRegion>> reads, writes;
  std::optional<Annotations> annotations;
  std::vector<Buffer> allocs;
  std::optional<Stmt> init;
};

enum class Where { kFunction, kBlock, kNested };

// The variables and buffers an expression reads.
class UseCollector : public IRVisitor {
 public:
  std::vector<const VarNode*> vars;
  bool reads_buffer = false;

 protected:
  void VisitVar(const VarNode* v) override { vars.push_back(v); }
  void VisitBufferLoad(const BufferLoadNode* op) override {
    reads_buffer = true;
    IRVisitor::VisitBufferLoad(op);
  }
};

class Parser {
 public:
  Parser(std::string_view src, const std::string& file)
      : file_(file), toks_(text::Tokenize(src, file_)) {}

  std::vector<PrimFunc> ParseAll();

 private:
  // ---- tokens ----
  const Token& Cur() const { return toks_[pos_]; }
  const Token& At(size_t k) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  bool IsOp(const char* op, size_t k = 0) const {
    return At(k).kind == TokKind::kOp && At(k).text == op;
  }
  bool IsName(const char* n, size_t k = 0) const {
    return At(k).kind == TokKind::kName && At(k).text == n;
  }
  bool IsKind(TokKind kind, size_t k = 0) const { return At(k).kind == kind; }
  Token Next() {
    Token t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool Accept(const char* op) {
    if (!IsOp(op)) return false;
    Next();
    return true;
  }
  SourceLoc Loc(const Token& t) const { return SourceLoc{file_, t.line, t.col}; }
  [[noreturn]] void Fail(const Token& t, const std::string& msg) const {
    throw ParseError(Loc(t), msg);
  }
  Token Expect(const char* op) {
    if (!IsOp(op)) Fail(Cur(), std::string("expected '") + op + "', found " + Describe(Cur()));
    return Next();
  }
  Token ExpectKeyword(const char* kw) {
    if (!IsName(kw)) Fail(Cur(), std::string("expected '") + kw + "', found " + Describe(Cur()));
    return Next();
  }
  void ExpectNewline() {
    if (!IsKind(TokKind::kNewline)) Fail(Cur(), "expected end of line, found " + Describe(Cur()));
    Next();
  }
  Token ExpectName(const char* what) {
    if (!IsKind(TokKind::kName)) {
      Fail(Cur(), std::string("expected ") + what + ", found " + Describe(Cur()));
    }
    return Next();
  }
  // "T" "." name ("." name)*: the dotted name after "T.".
  std::string DottedT() {
    ExpectKeyword("T");
    std::string name;
    do {
      Expect(".");
      Token n = ExpectName("a name after '.'");
      name += name.empty() ? n.text : "." + n.text;
    } while (IsOp("."));
    return name;
  }

  // ---- scopes ----
  void PushScope() { scopes_.emplace_back(); }
  void PopScope() { scopes_.pop_back(); }
  void Define(const Token& name, Symbol sym) {
    if (text::IsReservedName(name.text)) Fail(name, "'" + name.text + "' is a reserved name");
    auto& scope = scopes_.back();
    if (scope.count(name.text)) {
      Fail(name, "'" + name.text + "' is already defined in this scope");
    }
    scope[name.text] = std::move(sym);
  }
  const Symbol* Lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return &f->second;
    }
    return nullptr;
  }
  const Symbol& LookupOrFail(const Token& name) {
    const Symbol* s = Lookup(name.text);
    if (s == nullptr) Fail(name, "undefined variable '" + name.text + "'");
    return *s;
  }
  Buffer LookupBuffer(const Token& name) {
    const Symbol& s = LookupOrFail(name);
    if (s.kind != Symbol::kBuffer) Fail(name, "'" + name.text + "' is not a buffer");
    return s.buffer;
  }

  // ---- expressions ----
  struct NestGuard {
    explicit NestGuard(Parser* p) : p(p) {
      if (++p->nesting_ > kMaxNesting) p->Fail(p->Cur(), "expression nested too deeply");
    }
    ~NestGuard() { --p->nesting_; }
    Parser* p;
  };
  int Depth(const Expr& e);
  Expr Build(const Token& at, const std::function<Expr()>& make);
  Expr ParseExpr();
  Expr ParseAnd();
  Expr ParseNot();
  Expr ParseComparison();
  Expr ParseArith();
  Expr ParseTerm();
  Expr ParseUnary();
  Expr ParseAtom();
  Expr IntLiteral(const Token& t, bool negative);
  Expr FloatLiteral(const Token& t, bool negative, DataType type);
  Expr ParseTCall(const Token& start);
  Expr ParseTypedConst(const Token& start, const std::string& name, DataType t);
  Expr ParseLoad(const Token& name, const Buffer& b);
  std::vector<Arg> ParseArgs() {
    Expect("(");
    return ParseArgsAfterOpen();
  }
  std::vector<Arg> ParseArgsAfterOpen();
  PyValue ParseValue();
  bool TupleAhead() const;  // at '(': does a top-level ',' or ')' follow?
  Expr IntegerExpr(const PyValue& v, const char* what);
  Expr ExprArg(const PyValue& v);
  std::vector<Expr> ExprArgs(const Token& at, const std::string& fn, const std::vector<Arg>& args,
                             size_t n);
  int64_t Lanes(const PyValue& v);
  Expr ExtentFrom(const Expr& start, const Expr& stop, const Token& at);

  // ---- statements ----
  std::vector<Stmt> ParseSuite(Where where);
  void ParseStatement(Where where, std::vector<Stmt>* out);
  Stmt ParseFor();
  Stmt ParseWith(Where where);
  Stmt ParseBlock(const Token& with_tok);
  Stmt ParseIf();
  void ParseAssign(Where where);
  Stmt ParseStore();
  void ParseCallStmt(Where where, std::vector<Stmt>* out);
  std::vector<BufferRegion> ParseRegions(const Token& at);
  BufferRegion ParseRegion();
  Annotations ParseDict(const PyValue& v);
  Buffer BufferFromArgs(const Token& at, const std::string& name, const std::vector<Arg>& args,
                        size_t first);
  std::vector<Expr> ShapeFrom(const PyValue& v, const char* what);
  Stmt Seq(std::vector<Stmt> stmts, const Token& at, const std::string& what);
  BlockMeta& RequireBlock(const Token& at, Where where, const std::string& what);
  // Header statements must precede the block's allocations: the printer
  // writes them first, so they may not read those buffers.
  BlockMeta& RequireBlockHeader(const Token& at, Where where, const std::string& what);
  // A binding or domain may not use the block's own iteration variables.
  void CheckNoIterVars(const BlockMeta& b, const Expr& e, const Token& at);

  // ---- functions ----
  PrimFunc ParseFunction();

  std::string file_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  int nesting_ = 0;
  std::vector<std::unordered_map<std::string, Symbol>> scopes_;
  // Loop variables in scope and their [min, min + extent), for T.axis.remap.
  std::unordered_map<const VarNode*, Range> loops_;
  std::vector<BlockMeta*> blocks_;  // innermost last; the root block first
  // Function-level state.
  std::vector<Buffer> params_;
  Annotations func_attrs_;
  bool have_func_attrs_ = false;
  // Depths of built expressions; holding the node keeps its address unique.
  std::unordered_map<const ExprNode*, std::pair<int, std::shared_ptr<const ExprNode>>> depth_;
};

// ---------------------------------------------------------------------------
// Expressions

int Parser::Depth(const Expr& e) {
  if (!e.defined()) return 0;
  auto it = depth_.find(e.get());
  if (it != depth_.end()) return it->second.first;
  int d = 0;
  auto child = [&](const Expr& c) { d = std::max(d, Depth(c)); };
  switch (e.kind()) {
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm:
    case ExprKind::kStringImm:
    case ExprKind::kVar:
      break;
    case ExprKind::kNot:
      child(e.as<NotNode>()->a);
      break;
    case ExprKind::kSelect: {
      const auto* s = e.as<SelectNode>();
      child(s->condition);
      child(s->true_value);
      child(s->false_value);
      break;
    }
    case ExprKind::kCast:
      child(e.as<CastNode>()->value);
      break;
    case ExprKind::kBufferLoad:
      for (const auto& i : e.as<BufferLoadNode>()->indices) child(i);
      break;
    case ExprKind::kCall:
      for (const auto& a : e.as<CallNode>()->args) child(a);
      break;
    case ExprKind::kRamp:
      child(e.as<RampNode>()->base);
      child(e.as<RampNode>()->stride);
      break;
    case ExprKind::kBroadcast:
      child(e.as<BroadcastNode>()->value);
      break;
    default:
      child(e.as<BinaryNode>()->a);
      child(e.as<BinaryNode>()->b);
      break;
  }
  depth_[e.get()] = {d + 1, e.node()};
  return d + 1;
}

Expr Parser::Build(const Token& at, const std::function<Expr()>& make) {
  Expr e;
  try {
    e = make();
  } catch (const IRError& err) {
    Fail(at, err.what());
  }
  if (Depth(e) > kMaxExprDepth) Fail(at, "expression nested too deeply");
  return e;
}

Expr Parser::ParseExpr() {
  NestGuard guard(this);
  Expr l = ParseAnd();
  while (IsName("or")) {
    Token op = Next();
    Expr r = ParseAnd();
    l = Build(op, [&] { return Or(l, r); });
  }
  return l;
}

Expr Parser::ParseAnd() {
  Expr l = ParseNot();
  while (IsName("and")) {
    Token op = Next();
    Expr r = ParseNot();
    l = Build(op, [&] { return And(l, r); });
  }
  return l;
}

Expr Parser::ParseNot() {
  if (!IsName("not")) return ParseComparison();
  NestGuard guard(this);
  Token op = Next();
  Expr a = ParseNot();
  return Build(op, [&] { return Not(a); });
}

Expr Parser::ParseComparison() {
  Expr l = ParseArith();
  static const std::pair<const char*, ExprKind> kCmps[] = {
      {"<", ExprKind::kLT},  {"<=", ExprKind::kLE}, {">", ExprKind::kGT},
      {">=", ExprKind::kGE}, {"==", ExprKind::kEQ}, {"!=", ExprKind::kNE}};
  for (int round = 0;; ++round) {
    const std::pair<const char*, ExprKind>* found = nullptr;
    for (const auto& c : kCmps) {
      if (IsOp(c.first)) found = &c;
    }
    if (found == nullptr) return l;
    if (round > 0) Fail(Cur(), "chained comparisons are not supported; add parentheses");
    Token op = Next();
    Expr r = ParseArith();
    l = Build(op, [&] { return Binary(found->second, l, r); });
  }
}

Expr Parser::ParseArith() {
  Expr l = ParseTerm();
  while (IsOp("+") || IsOp("-")) {
    Token op = Next();
    Expr r = ParseTerm();
    l = Build(op, [&] { return op.text == "+" ? Add(l, r) : Sub(l, r); });
  }
  return l;
}

Expr Parser::ParseTerm() {
  Expr l = ParseUnary();
  while (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%")) {
    Token op = Next();
    Expr r = ParseUnary();
    l = Build(op, [&] {
      if (op.text == "*") return Mul(l, r);
      if (op.text == "/") return Div(l, r);
      if (op.text == "//") return FloorDiv(l, r);
      return FloorMod(l, r);
    });
  }
  return l;
}

Expr Parser::ParseUnary() {
  if (IsOp("-")) {
    Token op = Next();
    // A negative literal is one constant (so -2147483648 stays an int32).
    if (IsKind(TokKind::kInt)) return IntLiteral(Next(), true);
    if (IsKind(TokKind::kFloat)) return FloatLiteral(Next(), true, DataType::Float32());
    NestGuard guard(this);
    Expr a = ParseUnary();
    return Build(op, [&] { return Neg(a); });
  }
  if (IsOp("+")) {
    NestGuard guard(this);
    Next();
    return ParseUnary();
  }
  return ParseAtom();
}

Expr Parser::IntLiteral(const Token& t, bool negative) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (ec != std::errc() || p != t.text.data() + t.text.size()) {
    Fail(t, "integer literal " + t.text + " is out of range");
  }
  constexpr uint64_t kI32 = uint64_t{1} << 31, kI64 = uint64_t{1} << 63;
  if (!negative) {
    if (v < kI32) return IntImm(static_cast<int64_t>(v));
    if (v < kI64) return IntImm(static_cast<int64_t>(v), DataType::Int64());
  } else {
    if (v <= kI32) return IntImm(-static_cast<int64_t>(v));
    if (v <= kI64) return IntImm(static_cast<int64_t>(0 - v), DataType::Int64());
  }
  Fail(t, "integer literal " + std::string(negative ? "-" : "") + t.text +
              " is out of range for int64");
}

Expr Parser::FloatLiteral(const Token& t, bool negative, DataType type) {
  std::string s = t.text;
  if (!s.empty() && s.back() == '.') s += '0';
  if (!s.empty() && s.front() == '.') s = "0" + s;
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) {
    Fail(t, "float literal " + t.text + " is out of range");
  }
  return FloatImm(negative ? -v : v, type);
}

Expr Parser::ParseAtom() {
  const Token& t = Cur();
  switch (t.kind) {
    case TokKind::kInt:
      return IntLiteral(Next(), false);
    case TokKind::kFloat:
      return FloatLiteral(Next(), false, DataType::Float32());
    case TokKind::kString:
      Fail(t, "a string is not an expression here");
    case TokKind::kOp:
      if (t.text == "(") {
        Next();
        Expr e = ParseExpr();
        Expect(")");
        return e;
      }
      break;
    case TokKind::kName: {
      if (t.text == "True" || t.text == "False") return BoolImm(Next().text == "True");
      if (t.text == "T" && IsOp(".", 1)) return ParseTCall(t);
      if (text::IsReservedName(t.text)) break;
      Token name = Next();
      const Symbol& s = LookupOrFail(name);
      if (s.kind == Symbol::kBuffer) {
        if (!IsOp("["))
          Fail(name, "buffer '" + name.text + "' must be indexed to be used as a value");
        return ParseLoad(name, s.buffer);
      }
      if (s.kind == Symbol::kHandle) Fail(name, "handle '" + name.text + "' is not a value");
      if (IsOp("[")) Fail(Cur(), "'" + name.text + "' is not a buffer");
      return s.var;
    }
    default:
      break;
  }
  Fail(t, "expected an expression, found " + Describe(t));
}

Expr Parser::ParseLoad(const Token& name, const Buffer& b) {
  Token open = Expect("[");
  std::vector<Expr> idx;
  if (IsOp("(") && IsOp(")", 1)) {
    Next();
    Next();
  } else {
    do {
      if (IsOp("]")) break;
      Expr e = ParseExpr();
      if (IsOp(":")) Fail(Cur(), "slices are only allowed in T.reads and T.writes");
      idx.push_back(e);
    } while (Accept(","));
  }
  Expect("]");
  if (idx.size() != b.ndim()) {
    Fail(name, "buffer " + name.text + " has " + std::to_string(b.ndim()) +
                   (b.ndim() == 1 ? " dimension" : " dimensions") + " but is indexed with " +
                   std::to_string(idx.size()));
  }
  return Build(open, [&] { return BufferLoad(b, idx); });
}

bool Parser::TupleAhead() const {
  int depth = 0;
  for (size_t k = pos_; k < toks_.size(); ++k) {
    const Token& t = toks_[k];
    if (t.kind == TokKind::kEnd || t.kind == TokKind::kNewline) return false;
    if (t.kind != TokKind::kOp) continue;
    if (t.text == "(" || t.text == "[" || t.text == "{") {
      ++depth;
    } else if (t.text == ")" || t.text == "]" || t.text == "}") {
      if (--depth == 0) return k == pos_ + 1;  // "()"
    } else if (t.text == "," && depth == 1) {
      return true;
    }
  }
  return false;
}

PyValue Parser::ParseValue() {
  NestGuard guard(this);
  PyValue v;
  v.tok = Cur();
  if (IsKind(TokKind::kString)) {
    v.kind = PyValue::kString;
    v.str = Next().text;
    return v;
  }
  if (IsOp("(") && TupleAhead()) {
    v.kind = PyValue::kTuple;
    Next();
    while (!IsOp(")")) {
      v.items.push_back(ParseValue());
      if (!Accept(",")) break;
    }
    Expect(")");
    return v;
  }
  if (IsOp("[")) {
    v.kind = PyValue::kList;
    Next();
    while (!IsOp("]")) {
      v.items.push_back(ParseValue());
      if (!Accept(",")) break;
    }
    Expect("]");
    return v;
  }
  if (IsOp("{")) {
    v.kind = PyValue::kDict;
    Next();
    while (!IsOp("}")) {
      if (!IsKind(TokKind::kString)) Fail(Cur(), "expected a string key, found " + Describe(Cur()));
      std::string key = Next().text;
      Expect(":");
      v.keys.push_back(key);
      v.items.push_back(ParseValue());
      if (!Accept(",")) break;
    }
    Expect("}");
    return v;
  }
  v.expr = ParseExpr();
  return v;
}

std::vector<Arg> Parser::ParseArgsAfterOpen() {
  std::vector<Arg> args;
  bool seen_kw = false;
  while (!IsOp(")")) {
    Arg a;
    if (IsKind(TokKind::kName) && IsOp("=", 1)) {
      a.kw = Next().text;
      Next();
      for (const auto& prev : args) {
        if (prev.kw == a.kw) Fail(At(0), "keyword argument '" + a.kw + "' given twice");
      }
      seen_kw = true;
    } else if (seen_kw) {
      Fail(Cur(), "positional argument after a keyword argument");
    }
    a.value = ParseValue();
    args.push_back(std::move(a));
    if (!Accept(",")) break;
  }
  Expect(")");
  return args;
}

Expr Parser::ExprArg(const PyValue& v) {
  if (v.kind != PyValue::kExpr) Fail(v.tok, "expected an expression, found " + Describe(v.tok));
  return v.expr;
}

Expr Parser::IntegerExpr(const PyValue& v, const char* what) {
  Expr e = ExprArg(v);
  if (!e.dtype().is_integer() || !e.dtype().is_scalar()) {
    Fail(v.tok, std::string(what) + " must be a scalar integer, got " + e.dtype().str());
  }
  return e;
}

std::vector<Expr> Parser::ExprArgs(const Token& at, const std::string& fn,
                                   const std::vector<Arg>& args, size_t n) {
  for (const auto& a : args) {
    if (!a.kw.empty()) Fail(a.value.tok, "T." + fn + " takes no keyword argument '" + a.kw + "'");
  }
  if (args.size() != n) {
    Fail(at, "T." + fn + " takes " + std::to_string(n) + " argument" + (n == 1 ? "" : "s") +
                 ", got " + std::to_string(args.size()));
  }
  std::vector<Expr> out;
  for (const auto& a : args) out.push_back(ExprArg(a.value));
  return out;
}

int64_t Parser::Lanes(const PyValue& v) {
  int64_t lanes = 0;
  if (v.kind != PyValue::kExpr || !AsConstInt(v.expr, &lanes) || lanes < 2 || lanes > 65535) {
    Fail(v.tok, "lanes must be an integer literal between 2 and 65535");
  }
  return lanes;
}

Expr Parser::ParseTypedConst(const Token& start, const std::string& name, DataType t) {
  // A literal argument is a constant of that type; anything else is a cast.
  size_t k = 1;
  bool neg = IsOp("-", k);
  if (neg) ++k;
  const Token& lit = At(k);
  bool literal =
      IsOp("(") && IsOp(")", k + 1) &&
      (lit.kind == TokKind::kInt || lit.kind == TokKind::kFloat || lit.kind == TokKind::kString ||
       (!neg && lit.kind == TokKind::kName && (lit.text == "True" || lit.text == "False")));
  if (!literal) {
    std::vector<Arg> args = ParseArgs();
    std::vector<Expr> a = ExprArgs(start, name, args, 1);
    return Build(start, [&] { return Cast(t, a[0]); });
  }
  Next();  // (
  if (neg) Next();
  Token v = Next();
  Next();  // )
  if (v.kind == TokKind::kName) {
    if (!t.is_bool()) Fail(v, "T." + name + " needs a number, found " + Describe(v));
    return BoolImm(v.text == "True");
  }
  if (t.is_bool()) {
    if (v.kind != TokKind::kInt || neg || (v.text != "0" && v.text != "1")) {
      Fail(v, "T.bool needs True, False, 0 or 1");
    }
    return BoolImm(v.text == "1");
  }
  if (t.is_floating()) {
    if (v.kind == TokKind::kString) {
      std::string s = (neg ? "-" : "") + v.text;
      if (s == "inf" || s == "+inf") return FloatImm(std::numeric_limits<double>::infinity(), t);
      if (s == "-inf") return FloatImm(-std::numeric_limits<double>::infinity(), t);
      if (s == "nan" || s == "-nan") return FloatImm(std::numeric_limits<double>::quiet_NaN(), t);
      Fail(v, "T." + name + " takes a number, \"inf\", \"-inf\" or \"nan\"");
    }
    return FloatLiteral(v, neg, t);
  }
  if (v.kind != TokKind::kInt) Fail(v, "T." + name + " needs an integer literal");
  uint64_t u = 0;
  auto [p, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), u);
  if (ec != std::errc() || p != v.text.data() + v.text.size()) {
    Fail(v, "integer literal " + v.text + " is out of range for " + name);
  }
  constexpr uint64_t kI64 = uint64_t{1} << 63;
  if (t.is_uint()) {
    if (neg && u != 0) Fail(v, "negative value for " + name);
    if (t.bits() < 64 && u >= kI64)
      Fail(v, "integer literal " + v.text + " is out of range for " + name);
    return IntImm(static_cast<int64_t>(u), t);
  }
  if (neg ? u > kI64 : u >= kI64) {
    Fail(v, "integer literal " + v.text + " is out of range for " + name);
  }
  return IntImm(neg ? static_cast<int64_t>(0 - u) : static_cast<int64_t>(u), t);
}

Expr Parser::ParseTCall(const Token& start) {
  std::string name = DottedT();
  DataType t;
  if (name != "handle" && DataType::Parse(name, &t) && t.is_scalar()) {
    if (!IsOp("(")) Fail(Cur(), "expected '(' after T." + name);
    return ParseTypedConst(start, name, t);
  }
  if (!IsOp("(")) Fail(Cur(), "expected '(' after T." + name + ", found " + Describe(Cur()));
  static const std::unordered_map<std::string, ExprKind> kBinaryFns = {
      {"min", ExprKind::kMin},           {"max", ExprKind::kMax},
      {"truncdiv", ExprKind::kDiv},      {"truncmod", ExprKind::kMod},
      {"floordiv", ExprKind::kFloorDiv}, {"floormod", ExprKind::kFloorMod},
      {"And", ExprKind::kAnd},           {"Or", ExprKind::kOr}};
  CallOp op;
  bool known = kBinaryFns.count(name) || name == "Not" || name == "Select" || name == "Cast" ||
               name == "Ramp" || name == "Broadcast" || CallOpFromName(name, &op);
  if (!known) Fail(start, "unknown intrinsic T." + name);
  std::vector<Arg> args = ParseArgs();
  if (auto it = kBinaryFns.find(name); it != kBinaryFns.end()) {
    std::vector<Expr> a = ExprArgs(start, name, args, 2);
    return Build(start, [&] { return Binary(it->second, a[0], a[1]); });
  }
  if (name == "Not") {
    std::vector<Expr> a = ExprArgs(start, name, args, 1);
    return Build(start, [&] { return Not(a[0]); });
  }
  if (name == "Select") {
    std::vector<Expr> a = ExprArgs(start, name, args, 3);
    return Build(start, [&] { return Select(a[0], a[1], a[2]); });
  }
  if (name == "Cast") {
    if (args.size() != 2 || !args[0].kw.empty() || !args[1].kw.empty()) {
      Fail(start, "T.Cast takes a type string and a value");
    }
    DataType to;
    if (args[0].value.kind != PyValue::kString || !DataType::Parse(args[0].value.str, &to) ||
        to.is_handle()) {
      Fail(args[0].value.tok, "expected a data type string such as \"float32\"");
    }
    Expr v = ExprArg(args[1].value);
    return Build(start, [&] { return Cast(to, v); });
  }
  if (name == "Ramp" || name == "Broadcast") {
    size_t n = name == "Ramp" ? 3 : 2;
    for (const auto& a : args) {
      if (!a.kw.empty()) Fail(a.value.tok, "T." + name + " takes no keyword arguments");
    }
    if (args.size() != n) {
      Fail(start, "T." + name + " takes " + std::to_string(n) + " arguments, got " +
                      std::to_string(args.size()));
    }
    int lanes = static_cast<int>(Lanes(args[n - 1].value));
    if (name == "Ramp") {
      Expr base = ExprArg(args[0].value), stride = ExprArg(args[1].value);
      return Build(start, [&] { return Ramp(base, stride, lanes); });
    }
    Expr v = ExprArg(args[0].value);
    return Build(start, [&] { return Broadcast(v, lanes); });
  }
  std::vector<Expr> a = ExprArgs(
      start, name, args, static_cast<size_t>(op == CallOp::kIfThenElse ? 3 : CallOpArity(op)));
  return Build(start, [&] { return Call(op, a); });
}

// The extent of [start, stop), recovering what the printer wrote (see
// Printer::Stop): a constant difference, stop itself when start is 0, the
// right operand of "start + extent", or else stop - start.
Expr Parser::ExtentFrom(const Expr& start, const Expr& stop, const Token& at) {
  int64_t a, b, d;
  bool a_int = AsConstInt(start, &a) && !start.dtype().is_bool();
  if (a_int && AsConstInt(stop, &b) && !stop.dtype().is_bool() &&
      !__builtin_sub_overflow(b, a, &d)) {
    return IntImm(d, stop.dtype());
  }
  if (a_int && a == 0) return stop;
  if (stop.kind() == ExprKind::kAdd && text::SameExpr(stop.as<BinaryNode>()->a, start)) {
    return stop.as<BinaryNode>()->b;
  }
  return Build(at, [&] { return Sub(stop, start); });
}

// ---------------------------------------------------------------------------
// Statements

Stmt Parser::Seq(std::vector<Stmt> stmts, const Token& at, const std::string& what) {
  if (stmts.empty()) Fail(at, what + " has no statements");
  return SeqStmt(std::move(stmts));
}

std::vector<Stmt> Parser::ParseSuite(Where where) {
  Expect(":");
  ExpectNewline();
  if (!IsKind(TokKind::kIndent))
    Fail(Cur(), "expected an indented block, found " + Describe(Cur()));
  Next();
  std::vector<Stmt> out;
  while (!IsKind(TokKind::kDedent) && !IsKind(TokKind::kEnd)) ParseStatement(where, &out);
  if (IsKind(TokKind::kDedent)) Next();
  return out;
}

BlockMeta& Parser::RequireBlock(const Token& at, Where where, const std::string& what) {
  if (where != Where::kBlock) Fail(at, what + " must be directly inside a block");
  return *blocks_.back();
}

BlockMeta& Parser::RequireBlockHeader(const Token& at, Where where, const std::string& what) {
  BlockMeta& b = RequireBlock(at, where, what);
  if (!b.allocs.empty()) {
    Fail(at, what + " must come before T.alloc_buffer in block '" + b.name + "'");
  }
  return b;
}

void Parser::CheckNoIterVars(const BlockMeta& b, const Expr& e, const Token& at) {
  UseCollector c;
  c.VisitExpr(e);
  for (const auto* v : c.vars) {
    for (const auto& iv : b.iter_vars) {
      if (iv.var.get() == v) {
        Fail(at, "iteration variable '" + v->name + "' of block '" + b.name +
                     "' used in a binding or domain of the same block");
      }
    }
  }
}

void Parser::ParseStatement(Where where, std::vector<Stmt>* out) {
  const Token& t = Cur();
  if (t.kind == TokKind::kName) {
    if (t.text == "for") {
      out->push_back(ParseFor());
      return;
    }
    if (t.text == "with") {
      Stmt s = ParseWith(where);
      if (s.defined()) out->push_back(s);
      return;
    }
    if (t.text == "if") {
      out->push_back(ParseIf());
      return;
    }
    if (t.text == "elif" || t.text == "else") Fail(t, "'" + t.text + "' without a matching 'if'");
    if (t.text == "pass") {
      Next();
      ExpectNewline();
      return;
    }
    if (t.text == "T" && IsOp(".", 1)) {
      ParseCallStmt(where, out);
      return;
    }
    if (IsOp("=", 1) || IsOp(",", 1)) {
      ParseAssign(where);
      return;
    }
    if (IsOp("[", 1)) {
      out->push_back(ParseStore());
      return;
    }
  }
  Fail(t, "expected a statement, found " + Describe(t));
}

Stmt Parser::ParseFor() {
  Token for_tok = Next();
  std::vector<Token> names;
  bool paren = Accept("(");
  do {
    names.push_back(ExpectName("a loop variable name"));
  } while (Accept(","));
  if (paren) Expect(")");
  ExpectKeyword("in");
  Token iter_tok = Cur();
  std::string fn;
  if (IsName("range")) {
    fn = Next().text;
  } else if (IsName("T")) {
    fn = DottedT();
  } else {
    Fail(Cur(), "expected range(...) or a T loop iterator, found " + Describe(Cur()));
  }
  static const std::unordered_map<std::string, ForKind> kKinds = {
      {"range", ForKind::kSerial},      {"serial", ForKind::kSerial},
      {"parallel", ForKind::kParallel}, {"vectorized", ForKind::kVectorized},
      {"unroll", ForKind::kUnrolled},   {"thread_binding", ForKind::kThreadBinding}};
  if (fn != "grid" && !kKinds.count(fn)) Fail(iter_tok, "unknown loop iterator T." + fn);
  std::vector<Arg> args = ParseArgs();
  struct Loop {
    Var var;
    Expr min, extent;
  };
  std::vector<Loop> loops;
  ForKind kind = ForKind::kSerial;
  std::string thread;
  Annotations ann;
  if (fn == "grid") {
    std::vector<Expr> extents = ExprArgs(iter_tok, "grid", args, args.size());
    if (extents.size() != names.size()) {
      Fail(iter_tok, "T.grid has " + std::to_string(extents.size()) + " extents for " +
                         std::to_string(names.size()) + " loop variables");
    }
    for (size_t i = 0; i < extents.size(); ++i) {
      IntegerExpr(args[i].value, "a loop extent");
      loops.push_back(
          {Var(names[i].text, extents[i].dtype()), IntImm(0, extents[i].dtype()), extents[i]});
    }
  } else {
    kind = kKinds.at(fn);
    std::vector<Expr> pos;
    for (const auto& a : args) {
      if (a.kw.empty()) {
        pos.push_back(IntegerExpr(a.value, "a loop bound"));
      } else if (a.kw == "annotations" && fn != "range") {
        ann = ParseDict(a.value);
      } else if (a.kw == "thread" && kind == ForKind::kThreadBinding) {
        if (a.value.kind != PyValue::kString) Fail(a.value.tok, "thread must be a string");
        thread = a.value.str;
      } else {
        Fail(a.value.tok, "unknown keyword argument '" + a.kw + "' for " +
                              (fn == "range" ? "range" : "T." + fn));
      }
    }
    if (pos.empty() || pos.size() > 2) {
      Fail(iter_tok, (fn == "range" ? "range" : "T." + fn) + " takes 1 or 2 bounds, got " +
                         std::to_string(pos.size()));
    }
    if (kind == ForKind::kThreadBinding && thread.empty()) {
      Fail(iter_tok, "T.thread_binding needs thread=\"...\"");
    }
    if (names.size() != 1) Fail(names[1], "this loop binds one variable");
    Expr min = pos.size() == 2 ? pos[0] : IntImm(0, pos[0].dtype());
    Expr extent = pos.size() == 2 ? ExtentFrom(pos[0], pos[1], iter_tok) : pos[0];
    loops.push_back({Var(names[0].text, extent.dtype()), min, extent});
  }
  PushScope();
  for (size_t i = 0; i < loops.size(); ++i) {
    Symbol s;
    s.var = loops[i].var;
    Define(names[i], s);
    loops_[loops[i].var.get()] = Range{loops[i].min, loops[i].extent};
  }
  Stmt body = Seq(ParseSuite(Where::kNested), for_tok, "loop body");
  for (const auto& l : loops) loops_.erase(l.var.get());
  PopScope();
  for (size_t i = loops.size(); i-- > 0;) {
    bool inner = i + 1 == loops.size();
    try {
      body = For(loops[i].var, loops[i].min, loops[i].extent, kind, body, thread,
                 inner || fn != "grid" ? ann : Annotations{});
    } catch (const IRError& e) {
      Fail(for_tok, e.what());
    }
  }
  return body;
}

Stmt Parser::ParseWith(Where where) {
  Token with_tok = Next();
  Token t = Cur();
  std::string fn = IsName("T") ? DottedT() : "";
  if (fn == "block" || fn == "sblock") return ParseBlock(with_tok);
  if (fn == "init") {
    BlockMeta& b = RequireBlock(t, where, "T.init()");
    std::vector<Arg> args = ParseArgs();
    if (!args.empty()) Fail(t, "T.init takes no arguments");
    if (b.init) Fail(t, "block '" + b.name + "' has two T.init() sections");
    PushScope();
    b.init = Seq(ParseSuite(Where::kNested), t, "T.init()");
    PopScope();
    return Stmt();
  }
  Fail(t, "expected T.block(...) or T.init() after 'with'");
}

Stmt Parser::ParseBlock(const Token& with_tok) {
  Token name_tok = Cur();
  std::vector<Arg> args = ParseArgs();
  BlockMeta meta;
  meta.tok = with_tok;
  for (const auto& a : args) {
    if (!a.kw.empty() || a.value.kind != PyValue::kString || args.size() > 1) {
      Fail(a.value.tok, "T.block takes one argument: the block name as a string");
    }
    meta.name = a.value.str;
  }
  PushScope();
  blocks_.push_back(&meta);
  std::vector<Stmt> body = ParseSuite(Where::kBlock);
  blocks_.pop_back();
  PopScope();
  BlockNode node;
  node.name = meta.name;
  node.iter_vars = std::move(meta.iter_vars);
  node.reads = meta.reads ? *meta.reads : std::vector<BufferRegion>{};
  node.writes = meta.writes ? *meta.writes : std::vector<BufferRegion>{};
  node.init = meta.init;
  node.body = Seq(std::move(body), with_tok, "block '" + meta.name + "'");
  node.alloc_buffers = std::move(meta.allocs);
  if (meta.annotations) node.annotations = *meta.annotations;
  try {
    return BlockRealize(std::move(meta.bindings), meta.predicate ? *meta.predicate : BoolImm(true),
                        MakeBlock(std::move(node)));
  } catch (const IRError& e) {
    Fail(with_tok, e.what());
  }
}

Stmt Parser::ParseIf() {
  Token if_tok = Next();
  Token cond_tok = Cur();
  Expr cond = ParseExpr();
  if (!cond.dtype().is_bool() || !cond.dtype().is_scalar()) {
    Fail(cond_tok, "if condition must be bool, got " + cond.dtype().str());
  }
  PushScope();
  Stmt then_case = Seq(ParseSuite(Where::kNested), if_tok, "if branch");
  PopScope();
  Stmt else_case;
  if (IsName("elif")) Fail(Cur(), "'elif' is not supported; write 'else:' and a nested 'if'");
  if (IsName("else")) {
    Token else_tok = Next();
    PushScope();
    else_case = Seq(ParseSuite(Where::kNested), else_tok, "else branch");
    PopScope();
  }
  return IfThenElseStmt(cond, then_case, else_case);
}

Stmt Parser::ParseStore() {
  Token name = Next();
  Buffer b = LookupBuffer(name);
  Token open = Expect("[");
  std::vector<Expr> idx;
  if (IsOp("(") && IsOp(")", 1)) {
    Next();
    Next();
  } else {
    do {
      if (IsOp("]")) break;
      Token at = Cur();
      Expr e = ParseExpr();
      if (IsOp(":")) Fail(Cur(), "slices are only allowed in T.reads and T.writes");
      if (!e.dtype().is_integer()) {
        Fail(at, "a buffer index must be an integer, got " + e.dtype().str());
      }
      idx.push_back(e);
    } while (Accept(","));
  }
  Expect("]");
  if (idx.size() != b.ndim()) {
    Fail(name, "buffer " + name.text + " has " + std::to_string(b.ndim()) +
                   (b.ndim() == 1 ? " dimension" : " dimensions") + " but is indexed with " +
                   std::to_string(idx.size()));
  }
  Token eq = Expect("=");
  Expr value = ParseExpr();
  ExpectNewline();
  try {
    return BufferStore(b, value, idx);
  } catch (const IRError& e) {
    Fail(eq, e.what());
  }
}

std::vector<Expr> Parser::ShapeFrom(const PyValue& v, const char* what) {
  std::vector<Expr> shape;
  if (v.kind == PyValue::kTuple || v.kind == PyValue::kList) {
    for (const auto& item : v.items) shape.push_back(IntegerExpr(item, what));
  } else {
    shape.push_back(IntegerExpr(v, what));
  }
  return shape;
}

Buffer Parser::BufferFromArgs(const Token& at, const std::string& name,
                              const std::vector<Arg>& args, size_t first) {
  std::vector<Expr> shape, strides;
  DataType dtype = DataType::Float32();
  std::string scope = "global";
  int64_t align = 0;
  bool have_shape = false, have_dtype = false;
  size_t npos = 0;
  for (size_t i = first; i < args.size(); ++i) {
    const Arg& a = args[i];
    std::string key = a.kw;
    if (key.empty()) {
      if (npos > 1) Fail(a.value.tok, "too many positional arguments");
      key = npos++ == 0 ? "shape" : "dtype";
    }
    const PyValue& v = a.value;
    if (key == "shape") {
      shape = ShapeFrom(v, "a buffer dimension");
      have_shape = true;
    } else if (key == "dtype") {
      if (v.kind != PyValue::kString || !DataType::Parse(v.str, &dtype) || dtype.is_handle() ||
          dtype.is_vector()) {
        Fail(v.tok, "unknown data type " +
                        (v.kind == PyValue::kString ? "\"" + v.str + "\"" : Describe(v.tok)));
      }
      if (have_dtype) Fail(v.tok, "dtype given twice");
      have_dtype = true;
    } else if (key == "scope") {
      if (v.kind != PyValue::kString || v.str.empty())
        Fail(v.tok, "scope must be a non-empty string");
      scope = v.str;
    } else if (key == "strides") {
      strides = ShapeFrom(v, "a buffer stride");
    } else if (key == "align") {
      if (v.kind != PyValue::kExpr || !AsConstInt(v.expr, &align) || align < 0) {
        Fail(v.tok, "align must be a non-negative integer");
      }
    } else {
      Fail(v.tok, "unknown keyword argument '" + key + "' for a buffer");
    }
  }
  if (!have_shape) Fail(at, "a buffer needs a shape");
  for (const auto* dims : {&shape, &strides}) {
    for (const auto& d : *dims) {
      UseCollector c;
      c.VisitExpr(d);
      if (c.reads_buffer) Fail(at, "a buffer's shape and strides may not read a buffer");
    }
  }
  if (!strides.empty() && strides.size() != shape.size()) {
    Fail(at, "buffer " + name + " has " + std::to_string(shape.size()) + " dimensions but " +
                 std::to_string(strides.size()) + " strides");
  }
  auto n = std::make_shared<BufferNode>();
  n->name = name;
  n->dtype = dtype;
  n->shape = std::move(shape);
  n->strides = std::move(strides);
  n->scope = scope;
  n->align = align;
  return Buffer(std::move(n));
}

void Parser::ParseAssign(Where where) {
  std::vector<Token> targets;
  do {
    targets.push_back(ExpectName("a name"));
  } while (Accept(","));
  Expect("=");
  Token rhs = Cur();
  if (!IsName("T") || !IsOp(".", 1)) {
    Fail(rhs, "expected T.alloc_buffer, T.match_buffer or T.axis.* after '='");
  }
  std::string fn = DottedT();
  std::vector<Arg> args = ParseArgs();
  ExpectNewline();
  if (fn == "axis.remap") {
    BlockMeta& b = RequireBlockHeader(rhs, where, "T.axis.remap");
    if (args.size() != 2 || !args[0].kw.empty() || !args[1].kw.empty() ||
        args[0].value.kind != PyValue::kString || args[1].value.kind != PyValue::kList) {
      Fail(rhs, "T.axis.remap takes a kind string and a list of loop variables");
    }
    const std::string& kinds = args[0].value.str;
    const auto& items = args[1].value.items;
    if (kinds.size() != targets.size() || items.size() != targets.size()) {
      Fail(rhs, "T.axis.remap(\"" + kinds + "\", ...) binds " + std::to_string(kinds.size()) +
                    " variable(s) from " + std::to_string(items.size()) +
                    " loop variable(s) into " + std::to_string(targets.size()) + " name(s)");
    }
    std::vector<IterVar> ivs;
    for (size_t i = 0; i < targets.size(); ++i) {
      if (kinds[i] != 'S' && kinds[i] != 'R') {
        Fail(args[0].value.tok,
             std::string("T.axis.remap kind '") + kinds[i] + "' is not 'S' or 'R'");
      }
      Expr e = ExprArg(items[i]);
      const auto* v = e.as<VarNode>();
      auto it = v ? loops_.find(v) : loops_.end();
      if (it == loops_.end()) Fail(items[i].tok, "T.axis.remap needs loop variables");
      IterVar iv{Var(targets[i].text, v->dtype), it->second,
                 kinds[i] == 'S' ? IterType::kDataPar : IterType::kCommReduce};
      ivs.push_back(iv);
      b.bindings.push_back(e);
    }
    for (size_t i = 0; i < targets.size(); ++i) {
      Symbol s;
      s.var = ivs[i].var;
      Define(targets[i], s);
      b.iter_vars.push_back(ivs[i]);
    }
    return;
  }
  if (targets.size() != 1) Fail(targets[1], "only T.axis.remap assigns several names");
  const Token& target = targets[0];
  static const std::unordered_map<std::string, IterType> kAxes = {
      {"axis.spatial", IterType::kDataPar},   {"axis.S", IterType::kDataPar},
      {"axis.reduce", IterType::kCommReduce}, {"axis.R", IterType::kCommReduce},
      {"axis.scan", IterType::kOrdered},      {"axis.opaque", IterType::kOpaque}};
  if (auto it = kAxes.find(fn); it != kAxes.end()) {
    BlockMeta& b = RequireBlockHeader(rhs, where, "T." + fn);
    if (args.size() != 2 || !args[0].kw.empty() || !args[1].kw.empty()) {
      Fail(rhs, "T." + fn + " takes a domain and a binding");
    }
    const PyValue& dom = args[0].value;
    Range r;
    if (dom.kind == PyValue::kTuple) {
      if (dom.items.size() != 2) Fail(dom.tok, "a domain tuple is (start, stop)");
      r.min = IntegerExpr(dom.items[0], "a domain bound");
      Expr stop = IntegerExpr(dom.items[1], "a domain bound");
      r.extent = ExtentFrom(r.min, stop, dom.tok);
    } else {
      r.extent = IntegerExpr(dom, "a domain extent");
      r.min = IntImm(0, r.extent.dtype());
    }
    Expr binding = IntegerExpr(args[1].value, "a binding");
    CheckNoIterVars(b, r.min, dom.tok);
    CheckNoIterVars(b, r.extent, dom.tok);
    CheckNoIterVars(b, binding, args[1].value.tok);
    IterVar iv{Var(target.text, r.extent.dtype()), r, it->second};
    Symbol s;
    s.var = iv.var;
    Define(target, s);
    b.iter_vars.push_back(iv);
    b.bindings.push_back(binding);
    return;
  }
  if (fn == "alloc_buffer") {
    if (where == Where::kNested) {
      Fail(rhs, "T.alloc_buffer must be directly inside a block or the function body");
    }
    Buffer buf = BufferFromArgs(rhs, target.text, args, 0);
    Symbol s;
    s.kind = Symbol::kBuffer;
    s.buffer = buf;
    Define(target, s);
    blocks_.back()->allocs.push_back(buf);
    return;
  }
  if (fn == "match_buffer") Fail(rhs, "T.match_buffer must be directly in the function body");
  Fail(rhs, "expected T.alloc_buffer, T.match_buffer or T.axis.* after '=', found T." + fn);
}

Annotations Parser::ParseDict(const PyValue& v) {
  if (v.kind != PyValue::kDict) Fail(v.tok, "expected a dict {\"key\": value, ...}");
  Annotations out;
  for (size_t i = 0; i < v.keys.size(); ++i) {
    const std::string& k = v.keys[i];
    const PyValue& val = v.items[i];
    if (out.count(k)) Fail(val.tok, "key \"" + k + "\" given twice");
    if (val.kind == PyValue::kString) {
      out[k] = StringImm(val.str);
    } else if (val.kind == PyValue::kExpr &&
               (val.expr.as<IntImmNode>() || val.expr.as<FloatImmNode>())) {
      out[k] = val.expr;
    } else {
      Fail(val.tok, "an annotation value must be an int, float, bool or string constant");
    }
  }
  return out;
}

BufferRegion Parser::ParseRegion() {
  Token name = ExpectName("a buffer name");
  Buffer b = LookupBuffer(name);
  Expect("[");
  BufferRegion r;
  r.buffer = b;
  if (IsOp("(") && IsOp(")", 1)) {
    Next();
    Next();
  } else {
    do {
      if (IsOp("]")) break;
      PyValue v;
      v.tok = Cur();
      v.expr = ParseExpr();
      Expr start = IntegerExpr(v, "a region bound");
      if (Accept(":")) {
        PyValue w;
        w.tok = Cur();
        w.expr = ParseExpr();
        Expr stop = IntegerExpr(w, "a region bound");
        r.region.push_back(Range{start, ExtentFrom(start, stop, w.tok)});
      } else {
        r.region.push_back(Range{start, IntImm(1, start.dtype())});
      }
    } while (Accept(","));
  }
  Expect("]");
  if (r.region.size() != b.ndim()) {
    Fail(name, "buffer " + name.text + " has " + std::to_string(b.ndim()) +
                   (b.ndim() == 1 ? " dimension" : " dimensions") + " but the region has " +
                   std::to_string(r.region.size()));
  }
  return r;
}

std::vector<BufferRegion> Parser::ParseRegions(const Token&) {
  Expect("(");
  // TVM used to wrap the regions in a list: T.reads([A[i], B[j]]).
  bool list = Accept("[");
  std::vector<BufferRegion> out;
  const char* close = list ? "]" : ")";
  while (!IsOp(close)) {
    out.push_back(ParseRegion());
    if (!Accept(",")) break;
  }
  Expect(close);
  if (list) Expect(")");
  return out;
}

void Parser::ParseCallStmt(Where where, std::vector<Stmt>* out) {
  Token start = Cur();
  std::string fn = DottedT();
  if (fn == "reads" || fn == "writes") {
    BlockMeta& b = RequireBlockHeader(start, where, "T." + fn);
    auto& slot = fn == "reads" ? b.reads : b.writes;
    if (slot) Fail(start, "T." + fn + " given twice in block '" + b.name + "'");
    slot = ParseRegions(start);
    ExpectNewline();
    return;
  }
  if (!IsOp("(")) Fail(Cur(), "expected '(' after T." + fn + ", found " + Describe(Cur()));
  if (fn == "evaluate") {
    std::vector<Arg> args = ParseArgs();
    std::vector<Expr> a = ExprArgs(start, fn, args, 1);
    ExpectNewline();
    out->push_back(Evaluate(a[0]));
    return;
  }
  if (fn == "where") {
    BlockMeta& b = RequireBlockHeader(start, where, "T.where");
    std::vector<Arg> args = ParseArgs();
    std::vector<Expr> a = ExprArgs(start, fn, args, 1);
    if (!a[0].dtype().is_bool() || !a[0].dtype().is_scalar()) {
      Fail(args[0].value.tok, "T.where needs a bool condition, got " + a[0].dtype().str());
    }
    if (b.predicate) Fail(start, "T.where given twice in block '" + b.name + "'");
    b.predicate = a[0];
    ExpectNewline();
    return;
  }
  if (fn == "block_attr" || fn == "func_attr") {
    if (fn == "func_attr" && where != Where::kFunction) {
      Fail(start, "T.func_attr must be at function level");
    }
    BlockMeta* b = fn == "block_attr" ? &RequireBlockHeader(start, where, "T.block_attr") : nullptr;
    std::vector<Arg> args = ParseArgs();
    if (args.size() != 1 || !args[0].kw.empty()) Fail(start, "T." + fn + " takes one dict");
    Annotations ann = ParseDict(args[0].value);
    ExpectNewline();
    if (b) {
      if (b->annotations) Fail(start, "T.block_attr given twice in block '" + b->name + "'");
      b->annotations = std::move(ann);
    } else {
      if (have_func_attrs_) Fail(start, "T.func_attr given twice");
      have_func_attrs_ = true;
      func_attrs_ = std::move(ann);
    }
    return;
  }
  Fail(start, "expected a statement, found an expression T." + fn + "(...)");
}

// ---------------------------------------------------------------------------
// Functions

PrimFunc Parser::ParseFunction() {
  Token at = Expect("@");
  Token deco = Cur();
  if (!IsName("T") || DottedT() != "prim_func") Fail(deco, "expected '@T.prim_func'");
  if (IsOp("(")) {
    Next();
    while (!IsOp(")")) {
      Token kw = ExpectName("a decorator argument");
      if (kw.text != "private" && kw.text != "check_well_formed") {
        Fail(kw, "unknown T.prim_func argument '" + kw.text + "'");
      }
      Expect("=");
      if (!IsName("True") && !IsName("False")) Fail(Cur(), "expected True or False");
      Next();
      if (!Accept(",")) break;
    }
    Expect(")");
  }
  ExpectNewline();
  ExpectKeyword("def");
  Token fname = ExpectName("a function name");
  params_.clear();
  func_attrs_.clear();
  have_func_attrs_ = false;
  scopes_.clear();
  loops_.clear();
  PushScope();
  Expect("(");
  std::vector<std::pair<Token, int>> handles;  // unbound T.handle parameters
  while (!IsOp(")")) {
    Token pname = ExpectName("a parameter name");
    Expect(":");
    Token type = Cur();
    if (!IsName("T")) Fail(type, "expected T.Buffer(...) or T.handle, found " + Describe(type));
    std::string tn = DottedT();
    Symbol s;
    if (tn == "Buffer") {
      std::vector<Arg> args = ParseArgs();
      s.kind = Symbol::kBuffer;
      s.buffer = BufferFromArgs(type, pname.text, args, 0);
      params_.push_back(s.buffer);
    } else if (tn == "handle") {
      s.kind = Symbol::kHandle;
      s.param = static_cast<int>(params_.size());
      params_.emplace_back();
      handles.emplace_back(pname, s.param);
    } else {
      Fail(type, "parameters must be T.Buffer(...) or T.handle; T." + tn + " is not supported");
    }
    Define(pname, s);
    if (!Accept(",")) break;
  }
  Expect(")");
  if (Accept("->")) ExpectKeyword("None");
  BlockMeta root;
  root.tok = at;
  root.name = "root";
  blocks_.assign(1, &root);
  Expect(":");
  ExpectNewline();
  if (!IsKind(TokKind::kIndent))
    Fail(Cur(), "expected an indented block, found " + Describe(Cur()));
  Next();
  std::vector<Stmt> body;
  while (!IsKind(TokKind::kDedent) && !IsKind(TokKind::kEnd)) {
    // T.match_buffer binds a handle parameter; it is handled here because it
    // names the handle rather than a value.
    if (IsKind(TokKind::kName) && IsOp("=", 1) && IsName("T", 2) && IsOp(".", 3) &&
        IsName("match_buffer", 4)) {
      Token target = Next();
      Next();
      Token rhs = Cur();
      DottedT();
      Expect("(");
      Token h = ExpectName("a T.handle parameter");
      const Symbol* sym = Lookup(h.text);
      if (sym == nullptr || sym->kind != Symbol::kHandle) {
        Fail(h, "'" + h.text + "' is not a T.handle parameter");
      }
      int idx = sym->param;
      if (params_[idx].defined()) Fail(h, "parameter '" + h.text + "' is matched twice");
      std::vector<Arg> args;
      if (Accept(",")) {
        args = ParseArgsAfterOpen();
      } else {
        Expect(")");
      }
      ExpectNewline();
      Buffer buf = BufferFromArgs(rhs, target.text, args, 0);
      params_[idx] = buf;
      Symbol s;
      s.kind = Symbol::kBuffer;
      s.buffer = buf;
      Define(target, s);
      continue;
    }
    ParseStatement(Where::kFunction, &body);
  }
  if (IsKind(TokKind::kDedent)) Next();
  for (const auto& [tok, idx] : handles) {
    if (!params_[idx].defined()) {
      Fail(tok, "parameter '" + tok.text + "' is a T.handle never bound by T.match_buffer");
    }
  }
  blocks_.clear();
  PrimFunc f;
  f.name = fname.text;
  f.params = params_;
  f.attrs = func_attrs_;
  // A lone explicit root block is the root; otherwise the statements (and
  // the allocations made at function level) form an implicit one.
  const auto* lone = body.size() == 1 ? body[0].as<BlockRealizeNode>() : nullptr;
  if (lone && lone->block->name == "root" && lone->block->iter_vars.empty() &&
      root.allocs.empty()) {
    f.body = body[0];
  } else {
    f.body = MakeRootBody(Seq(std::move(body), fname, "function '" + fname.text + "'"),
                          std::move(root.allocs));
  }
  scopes_.clear();
  return f;
}

std::vector<PrimFunc> Parser::ParseAll() {
  std::vector<PrimFunc> out;
  while (!IsKind(TokKind::kEnd)) {
    if (IsKind(TokKind::kNewline)) {
      Next();
    } else if (IsName("from") || IsName("import")) {
      // "from tvm.script import tir as T", "import tvm": nothing to build.
      while (!IsKind(TokKind::kNewline) && !IsKind(TokKind::kEnd)) Next();
    } else if (IsOp("@")) {
      out.push_back(ParseFunction());
    } else {
      Fail(Cur(), "expected '@T.prim_func', found " + Describe(Cur()));
    }
  }
  return out;
}

}  // namespace

std::vector<PrimFunc> ParseFuncs(std::string_view text, const std::string& filename) {
  return Parser(text, filename).ParseAll();
}

PrimFunc ParseFunc(std::string_view text, const std::string& filename) {
  std::vector<PrimFunc> fs = ParseFuncs(text, filename);
  if (fs.size() != 1) {
    throw ParseError(SourceLoc{filename, 1, 1},
                     "expected exactly one @T.prim_func, found " + std::to_string(fs.size()));
  }
  return std::move(fs[0]);
}

}  // namespace kiln::ir
