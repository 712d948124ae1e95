// ir/schedule/analysis.h, scopes: which blocks a scope holds, and which of
// them write, read, produce for or consume from one another.
#include "ir/schedule/analysis.h"

#include <algorithm>
#include <unordered_set>

#include "ir/schedule/analysis_internal.h"

namespace kiln::ir {

using analysis_internal::SetWhy;
using analysis_internal::Touches;

namespace {

void CollectBlockPaths(const Stmt& s, StmtPath* path, std::vector<StmtPath>* out) {
  if (!s.defined()) return;
  path->push_back(s);
  switch (s.kind()) {
    case StmtKind::kFor:
      CollectBlockPaths(s.as<ForNode>()->body, path, out);
      break;
    case StmtKind::kBlockRealize:
      out->push_back(*path);
      break;
    case StmtKind::kSeqStmt:
      for (const auto& c : s.as<SeqStmtNode>()->seq) CollectBlockPaths(c, path, out);
      break;
    case StmtKind::kIfThenElse:
      CollectBlockPaths(s.as<IfThenElseNode>()->then_case, path, out);
      CollectBlockPaths(s.as<IfThenElseNode>()->else_case, path, out);
      break;
    default:
      break;
  }
  path->pop_back();
}

}  // namespace

// ---- Scopes -------------------------------------------------------------------

StmtPath ScopePathOf(const StmtPath& path) {
  int scope = ScopeIndex(path);
  if (scope < 0) return {};
  return StmtPath(path.begin(), path.begin() + scope + 1);
}

const BlockRealizeNode* ScopeBlockOf(const StmtPath& path) {
  int scope = ScopeIndex(path);
  return scope < 0 ? nullptr : path[scope].as<BlockRealizeNode>();
}

std::vector<const BlockRealizeNode*> BlocksInScope(const Stmt& scope) {
  // For a loop, ChildBlockRealizes walks the loop itself, so that a block
  // that is the loop's whole body counts (its body would give its children).
  return ChildBlockRealizes(scope);
}

std::vector<StmtPath> BlockPathsInScope(const Stmt& scope) {
  std::vector<StmtPath> out;
  StmtPath path{scope};
  if (const auto* r = scope.as<BlockRealizeNode>()) {
    if (r->block->init) CollectBlockPaths(*r->block->init, &path, &out);
    CollectBlockPaths(r->block->body, &path, &out);
  } else if (const auto* l = scope.as<ForNode>()) {
    CollectBlockPaths(l->body, &path, &out);
  }
  return out;
}

std::vector<const BlockRealizeNode*> WritersOf(const Stmt& scope, const BufferNode* buffer) {
  std::vector<const BlockRealizeNode*> out;
  for (const auto* r : BlocksInScope(scope)) {
    if (Touches(r->block->writes, buffer)) out.push_back(r);
  }
  return out;
}

std::vector<const BlockRealizeNode*> ReadersOf(const Stmt& scope, const BufferNode* buffer) {
  std::vector<const BlockRealizeNode*> out;
  for (const auto* r : BlocksInScope(scope)) {
    if (Touches(r->block->reads, buffer)) out.push_back(r);
  }
  return out;
}

std::vector<const BlockRealizeNode*> ProducersOf(const Stmt& scope, const BlockNode* block) {
  std::vector<const BlockRealizeNode*> out;
  for (const auto* r : BlocksInScope(scope)) {
    if (r->block.get() == block) continue;
    bool produces =
        std::any_of(r->block->writes.begin(), r->block->writes.end(),
                    [&](const BufferRegion& w) { return Touches(block->reads, w.buffer.get()); });
    if (produces) out.push_back(r);
  }
  return out;
}

std::vector<const BlockRealizeNode*> ConsumersOf(const Stmt& scope, const BlockNode* block) {
  std::vector<const BlockRealizeNode*> out;
  for (const auto* r : BlocksInScope(scope)) {
    if (r->block.get() == block) continue;
    bool consumes = std::any_of(
        block->writes.begin(), block->writes.end(),
        [&](const BufferRegion& w) { return Touches(r->block->reads, w.buffer.get()); });
    if (consumes) out.push_back(r);
  }
  return out;
}

bool IsOutputBlock(const Stmt& scope, const BlockNode* block) {
  const auto* realize = scope.as<BlockRealizeNode>();
  std::unordered_set<const BufferNode*> allocated;
  if (realize != nullptr) {
    for (const Buffer& b : realize->block->alloc_buffers) allocated.insert(b.get());
  }
  return std::any_of(block->writes.begin(), block->writes.end(),
                     [&](const BufferRegion& w) { return !allocated.count(w.buffer.get()); });
}

}  // namespace kiln::ir
