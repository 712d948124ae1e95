// Functions and whole texts: @T.prim_func with its parameters (T.Buffer or
// T.handle bound by T.match_buffer), the top level of a file, and index-map
// lambdas. Statements are read by ir/text/parser.cc, modules by
// ir/text/module_parser.cc.
#include "ir/text/parser.h"

#include "ir/op.h"
#include "ir/text/parser_impl.h"

namespace kiln::ir {

namespace text {

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
      if (!IsKnownPrimFuncFlag(kw.text)) {
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
    } else if (IsOp("@") && IsName("I", 1)) {
      ParseModule(&out);
    } else if (IsOp("@")) {
      out.push_back(ParseFunction());
    } else {
      Fail(Cur(), "expected '@T.prim_func', found " + Describe(Cur()));
    }
  }
  return out;
}

ParsedLambda Parser::ParseLambdaAll() {
  ParsedLambda out;
  while (IsKind(TokKind::kNewline)) Next();
  ExpectKeyword("lambda");
  PushScope();
  while (!IsOp(":")) {
    Token name = ExpectName("a lambda parameter");
    Var v(name.text, DataType::Int32());
    Define(name, Symbol{Symbol::kVar, v, Buffer(), -1});
    out.params.push_back(v);
    if (!Accept(",")) break;
  }
  Expect(":");
  PyValue body = ParseValue();
  if (body.kind == PyValue::kTuple) {
    for (const PyValue& item : body.items) out.body.push_back(ExprArg(item));
  } else {
    out.body.push_back(ExprArg(body));
  }
  PopScope();
  while (IsKind(TokKind::kNewline)) Next();
  if (!IsKind(TokKind::kEnd)) Fail(Cur(), "expected the end of the lambda, found " + Describe(Cur()));
  return out;
}

}  // namespace text

ParsedLambda ParseLambda(std::string_view src, const std::string& filename) {
  return text::Parser(src, filename).ParseLambdaAll();
}

std::vector<PrimFunc> ParseFuncs(std::string_view src, const std::string& filename) {
  return text::Parser(src, filename).ParseAll();
}

PrimFunc ParseFunc(std::string_view src, const std::string& filename) {
  std::vector<PrimFunc> fs = ParseFuncs(src, filename);
  if (fs.size() != 1) {
    throw ParseError(SourceLoc{filename, 1, 1},
                     "expected exactly one @T.prim_func, found " + std::to_string(fs.size()));
  }
  return std::move(fs[0]);
}

}  // namespace kiln::ir
