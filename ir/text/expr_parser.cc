// Expressions, call arguments and constants of the text form.
#include <charconv>
#include <cmath>
#include <limits>

#include "ir/op.h"
#include "ir/text/parser_impl.h"
#include "ir/text/same_expr.h"

namespace kiln::ir::text {

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
  if (op == CallOp::kStorageSync) {
    if (args.size() != 1 || !args[0].kw.empty() || args[0].value.kind != PyValue::kString) {
      Fail(start, "T.tvm_storage_sync takes one memory scope string such as \"shared\"");
    }
    std::string scope = args[0].value.str;
    return Build(start, [&] { return Call(op, {StringImm(scope)}); });
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

}  // namespace kiln::ir::text
