// Locating and replacing statements in a function's (immutable) tree.
//
// A schedule edits its function by rebuilding the path from the root down to
// the statement a primitive changed; every other subtree is shared.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/prim_func.h"
#include "ir/stmt.h"

namespace kiln::ir {

// Statements from the function body (the root BlockRealize) down to a target,
// inclusive: path.front() is the root, path.back() the target.
using StmtPath = std::vector<Stmt>;

// The BlockRealize of the block called `name`, or nullopt.
std::optional<StmtPath> FindBlockPath(const PrimFunc& f, const std::string& name);
// The For whose loop variable is `loop_var`, or nullopt.
std::optional<StmtPath> FindLoopPath(const PrimFunc& f, const VarNode* loop_var);

// The loops between the innermost enclosing block and path.back(), outer to
// inner (path.back() itself excluded even if it is a loop).
std::vector<const ForNode*> LoopsAbove(const StmtPath& path);
// Index in `path` of the innermost BlockRealize strictly above path.back()
// (its scope block); -1 if none.
int ScopeIndex(const StmtPath& path);

// Every BlockRealize under `s` that is not nested inside another block below
// `s` (the "child blocks" of a scope or loop), in program order.
std::vector<const BlockRealizeNode*> ChildBlockRealizes(const Stmt& s);
// Every block in the function, in program (pre-)order, root included.
std::vector<const BlockRealizeNode*> AllBlockRealizes(const PrimFunc& f);

// Replaces path.back() by `replacement` and rebuilds its ancestors; returns the
// new function body. An undefined replacement removes the statement from its
// enclosing SeqStmt (it is an error anywhere else).
Stmt ReplaceAlongPath(const StmtPath& path, Stmt replacement);
// As above, replacing the Block of the BlockRealize at path.back().
Stmt ReplaceBlockAlongPath(const StmtPath& path, Block replacement);

}  // namespace kiln::ir
