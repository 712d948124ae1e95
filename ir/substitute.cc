#include "ir/substitute.h"

#include "ir/functor.h"
#include "ir/op.h"

namespace kiln::ir {

namespace {

class Substituter : public IRMutator {
 public:
  explicit Substituter(const VarMap& map) : map_(map) {}

 protected:
  Expr VisitVar(const Expr& e, const VarNode* op) override {
    auto it = map_.find(op);
    if (it == map_.end()) return e;
    if (it->second.dtype() != op->dtype) return Cast(op->dtype, it->second);
    return it->second;
  }

 private:
  const VarMap& map_;
};

// Substituter that leaves the inside of a non-opaque block alone.
class LoopVarSubstituter : public Substituter {
 public:
  using Substituter::Substituter;

 protected:
  Block VisitBlock(const Block& b) override {
    return b->iter_vars.empty() ? Substituter::VisitBlock(b) : b;
  }
};

class VarFinder : public IRVisitor {
 public:
  explicit VarFinder(const std::function<bool(const VarNode*)>& pred) : pred_(pred) {}
  bool found = false;

  void VisitExpr(const Expr& e) override {
    if (!found) IRVisitor::VisitExpr(e);
  }

 protected:
  void VisitVar(const VarNode* op) override {
    if (pred_(op)) found = true;
  }

 private:
  const std::function<bool(const VarNode*)>& pred_;
};

class FreeVarCollector : public IRVisitor {
 public:
  std::vector<const VarNode*> vars;

 protected:
  void VisitVar(const VarNode* op) override {
    if (seen_.insert(op).second) vars.push_back(op);
  }

 private:
  std::unordered_set<const VarNode*> seen_;
};

}  // namespace

Expr Substitute(const Expr& e, const VarMap& map) {
  if (map.empty()) return e;
  Substituter s(map);
  return s.VisitExpr(e);
}

Stmt Substitute(const Stmt& st, const VarMap& map) {
  if (map.empty()) return st;
  Substituter s(map);
  return s.VisitStmt(st);
}

Stmt SubstituteLoopVars(const Stmt& st, const VarMap& map) {
  if (map.empty()) return st;
  LoopVarSubstituter s(map);
  return s.VisitStmt(st);
}

bool UsesVar(const Expr& e, const std::function<bool(const VarNode*)>& pred) {
  VarFinder f(pred);
  f.VisitExpr(e);
  return f.found;
}

bool UsesVar(const Stmt& s, const std::function<bool(const VarNode*)>& pred) {
  VarFinder f(pred);
  f.VisitStmt(s);
  return f.found;
}

std::vector<const VarNode*> FreeVars(const Expr& e) {
  FreeVarCollector c;
  c.VisitExpr(e);
  return c.vars;
}

}  // namespace kiln::ir
