// The parser's internal state, shared by ir/text/parser.cc (statements and
// functions) and ir/text/expr_parser.cc (expressions and call arguments).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/error.h"
#include "ir/text/parser.h"
#include "ir/functor.h"
#include "ir/prim_func.h"
#include "ir/text/dialect.h"
#include "ir/text/lexer.h"
#include "ir/text/same_expr.h"

namespace kiln::ir::text {

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

// Recursive descent over the token list; one instance parses one text.
class Parser {
 public:
  Parser(std::string_view src, const std::string& file)
      : file_(file), toks_(text::Tokenize(src, file_)) {}

  std::vector<PrimFunc> ParseAll();
  ParsedLambda ParseLambdaAll();

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
  // "T" "." name ("." name)*: the dotted name after "T.", in the older
  // dialect's spelling (ir/text/dialect.h).
  std::string DottedT() {
    ExpectKeyword("T");
    std::string name;
    do {
      Expect(".");
      Token n = ExpectName("a name after '.'");
      name += name.empty() ? n.text : "." + n.text;
    } while (IsOp("."));
    return CanonicalTName(name);
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
  std::vector<BufferRegion> ParseRegions();
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
  // `@I.ir_module` and its class around functions (ir/text/module_parser.cc).
  void ParseModule(std::vector<PrimFunc>* out);

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

}  // namespace kiln::ir::text
