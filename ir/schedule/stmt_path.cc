#include "ir/schedule/stmt_path.h"

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/op.h"

namespace kiln::ir {

namespace {

// Depth-first search for the first statement matching `pred`, keeping the
// path as pointers to the handles in the (immutable, live) tree: copying a
// handle per visited node would cost two atomic reference-count updates.
template <typename Pred>
bool Search(const Stmt& s, std::vector<const Stmt*>* path, const Pred& pred) {
  if (!s.defined()) return false;
  path->push_back(&s);
  if (pred(s)) return true;
  switch (s.kind()) {
    case StmtKind::kFor:
      if (Search(s.as<ForNode>()->body, path, pred)) return true;
      break;
    case StmtKind::kBlockRealize: {
      const BlockNode* b = s.as<BlockRealizeNode>()->block.get();
      if (b->init && Search(*b->init, path, pred)) return true;
      if (Search(b->body, path, pred)) return true;
      break;
    }
    case StmtKind::kSeqStmt:
      for (const auto& c : s.as<SeqStmtNode>()->seq) {
        if (Search(c, path, pred)) return true;
      }
      break;
    case StmtKind::kIfThenElse: {
      const auto* n = s.as<IfThenElseNode>();
      if (Search(n->then_case, path, pred) || Search(n->else_case, path, pred)) return true;
      break;
    }
    default:
      break;
  }
  path->pop_back();
  return false;
}

template <typename Pred>
std::optional<StmtPath> FindPath(const PrimFunc& f, const Pred& pred) {
  // Handles are looked up before every primitive: the search stack is kept
  // per thread rather than allocated each time.
  thread_local std::vector<const Stmt*> found;
  found.clear();
  if (!Search(f.body, &found, pred)) return std::nullopt;
  StmtPath path;
  path.reserve(found.size());
  for (const Stmt* s : found) path.push_back(*s);
  return path;
}

void CollectChildBlocks(const Stmt& s, std::vector<const BlockRealizeNode*>* out) {
  if (!s.defined()) return;
  switch (s.kind()) {
    case StmtKind::kFor: return CollectChildBlocks(s.as<ForNode>()->body, out);
    case StmtKind::kBlockRealize: out->push_back(s.as<BlockRealizeNode>()); return;
    case StmtKind::kSeqStmt:
      for (const auto& c : s.as<SeqStmtNode>()->seq) CollectChildBlocks(c, out);
      return;
    case StmtKind::kIfThenElse:
      CollectChildBlocks(s.as<IfThenElseNode>()->then_case, out);
      CollectChildBlocks(s.as<IfThenElseNode>()->else_case, out);
      return;
    default: return;
  }
}

// Rebuilds `parent` with its child `old_child` replaced by `new_child`.
Stmt RebuildParent(const Stmt& parent, const Stmt& old_child, const Stmt& new_child) {
  switch (parent.kind()) {
    case StmtKind::kFor: {
      if (!new_child.defined()) throw IRError("cannot remove the only statement of a loop body");
      auto n = MakeNode<ForNode>(*parent.as<ForNode>());
      n->body = new_child;
      return Stmt(std::move(n));
    }
    case StmtKind::kBlockRealize: {
      const auto* realize = parent.as<BlockRealizeNode>();
      BlockNode b = *realize->block.get();
      if (b.init && b.init->same_as(old_child)) {
        if (new_child.defined()) {
          b.init = new_child;
        } else {
          b.init.reset();
        }
      } else {
        if (!new_child.defined()) throw IRError("cannot remove the only statement of block " + b.name);
        b.body = new_child;
      }
      auto n = MakeNode<BlockRealizeNode>(*realize);
      n->block = MakeBlock(std::move(b));
      return Stmt(std::move(n));
    }
    case StmtKind::kSeqStmt: {
      std::vector<Stmt> seq;
      for (const auto& c : parent.as<SeqStmtNode>()->seq) {
        if (c.same_as(old_child)) {
          if (new_child.defined()) seq.push_back(new_child);
        } else {
          seq.push_back(c);
        }
      }
      if (seq.empty()) return Stmt();
      return SeqStmt(std::move(seq));
    }
    case StmtKind::kIfThenElse: {
      auto n = MakeNode<IfThenElseNode>(*parent.as<IfThenElseNode>());
      if (n->then_case.same_as(old_child)) {
        if (!new_child.defined()) throw IRError("cannot remove the then-branch of an if");
        n->then_case = new_child;
      } else {
        n->else_case = new_child;
      }
      return Stmt(std::move(n));
    }
    default:
      throw IRError("ReplaceAlongPath: a leaf statement has no children");
  }
}

}  // namespace

std::optional<StmtPath> FindBlockPath(const PrimFunc& f, const std::string& name) {
  return FindPath(f, [&](const Stmt& s) {
    const auto* r = s.as<BlockRealizeNode>();
    return r != nullptr && r->block->name == name;
  });
}

std::optional<StmtPath> FindLoopPath(const PrimFunc& f, const VarNode* loop_var) {
  return FindPath(f, [&](const Stmt& s) {
    const auto* l = s.as<ForNode>();
    return l != nullptr && l->loop_var.get() == loop_var;
  });
}

std::vector<const ForNode*> LoopsAbove(const StmtPath& path) {
  int scope = ScopeIndex(path);
  std::vector<const ForNode*> loops;
  loops.reserve(path.size() - static_cast<size_t>(scope + 1));
  for (size_t i = static_cast<size_t>(scope + 1); i + 1 < path.size(); ++i) {
    if (const auto* l = path[i].as<ForNode>()) loops.push_back(l);
  }
  return loops;
}

int ScopeIndex(const StmtPath& path) {
  for (int i = static_cast<int>(path.size()) - 2; i >= 0; --i) {
    if (path[i].kind() == StmtKind::kBlockRealize) return i;
  }
  return -1;
}

std::vector<const BlockRealizeNode*> ChildBlockRealizes(const Stmt& s) {
  std::vector<const BlockRealizeNode*> out;
  if (const auto* r = s.as<BlockRealizeNode>()) {
    const BlockNode* b = r->block.get();
    if (b->init) CollectChildBlocks(*b->init, &out);
    CollectChildBlocks(b->body, &out);
  } else {
    CollectChildBlocks(s, &out);
  }
  return out;
}

std::vector<const BlockRealizeNode*> AllBlockRealizes(const PrimFunc& f) {
  std::vector<const BlockRealizeNode*> out;
  std::vector<const Stmt*> path;
  Search(f.body, &path, [&](const Stmt& s) {
    if (const auto* r = s.as<BlockRealizeNode>()) out.push_back(r);
    return false;
  });
  return out;
}

Stmt ReplaceAlongPath(const StmtPath& path, Stmt replacement) {
  if (path.empty()) throw IRError("ReplaceAlongPath: empty path");
  Stmt current = std::move(replacement);
  for (size_t i = path.size() - 1; i > 0; --i) {
    current = RebuildParent(path[i - 1], path[i], current);
    if (!current.defined() && path[i - 1].kind() != StmtKind::kSeqStmt) {
      throw IRError("ReplaceAlongPath: removal left an empty statement");
    }
  }
  if (!current.defined()) throw IRError("ReplaceAlongPath: cannot remove the function body");
  return current;
}

Stmt ReplaceBlockAlongPath(const StmtPath& path, Block replacement) {
  const auto* realize = path.back().as<BlockRealizeNode>();
  if (realize == nullptr) throw IRError("ReplaceBlockAlongPath: target is not a block");
  auto n = MakeNode<BlockRealizeNode>(*realize);
  n->block = std::move(replacement);
  return ReplaceAlongPath(path, Stmt(std::move(n)));
}

}  // namespace kiln::ir
