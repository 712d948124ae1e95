#include "ir/text/parser.h"

#include <unordered_map>

#include "ir/op.h"
#include "ir/text/parser_impl.h"
#include "ir/text/same_expr.h"

namespace kiln::ir {

namespace text {

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
    if (IsOp(":", 1)) {
      Fail(t, "unsupported annotated assignment '" + t.text +
                  ": ...' (a let binding; Kiln's subset has none)");
    }
    if (t.text == "while") Fail(t, "unsupported 'while' loop (Kiln's subset has for loops only)");
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
  if (!fn.empty()) {
    Fail(t, "unsupported 'with T." + fn + "()': Kiln reads T.block / T.sblock and T.init()");
  }
  Fail(t, "expected T.block(...) or T.init() after 'with'");
}

Stmt Parser::ParseBlock(const Token& with_tok) {
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
  auto n = MakeNode<BufferNode>();
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
    const std::string k = CanonicalAttrKey(v.keys[i]);
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

std::vector<BufferRegion> Parser::ParseRegions() {
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
    slot = ParseRegions();
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

}  // namespace text

}  // namespace kiln::ir
