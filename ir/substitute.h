// Substituting variables, and asking which variables an expression uses.
#pragma once

#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "ir/expr.h"
#include "ir/stmt.h"

namespace kiln::ir {

using VarMap = std::unordered_map<const VarNode*, Expr>;

// Replaces every use of a mapped variable (definitions such as loop
// variables and block iter vars are left alone). Unchanged subtrees are
// returned as is. A replacement of another type is cast to the variable's
// type.
Expr Substitute(const Expr& e, const VarMap& map);
Stmt Substitute(const Stmt& s, const VarMap& map);
// The same for a map of loop variables only: the body, init, regions and
// buffers of a block with iter vars are not entered, since no loop
// variable from outside can appear there (a block sees only its own iter
// vars; ir/verify/verifier.cc reports any other use). Its bindings and
// predicate, and the whole of an opaque block, are substituted.
Stmt SubstituteLoopVars(const Stmt& s, const VarMap& map);

// True if `e` (or `s`) reads any variable for which `pred` holds.
bool UsesVar(const Expr& e, const std::function<bool(const VarNode*)>& pred);
bool UsesVar(const Stmt& s, const std::function<bool(const VarNode*)>& pred);

// Every variable `e` reads, in first-use order.
std::vector<const VarNode*> FreeVars(const Expr& e);

}  // namespace kiln::ir
