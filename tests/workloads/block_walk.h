// Test helper: the blocks of a PrimFunc below the root, with their loops.
#pragma once

#include <string>
#include <vector>

#include "ir/prim_func.h"
#include "ir/stmt.h"

namespace kiln::ir::testing {

struct BlockSite {
  const BlockNode* block;
  const BlockRealizeNode* realize;
  std::vector<const ForNode*> loops;  // outermost first
};

inline void CollectBlocks(const Stmt& s, std::vector<const ForNode*>* loops,
                          std::vector<BlockSite>* out) {
  if (const auto* f = s.as<ForNode>()) {
    loops->push_back(f);
    CollectBlocks(f->body, loops, out);
    loops->pop_back();
  } else if (const auto* seq = s.as<SeqStmtNode>()) {
    for (const auto& x : seq->seq) CollectBlocks(x, loops, out);
  } else if (const auto* r = s.as<BlockRealizeNode>()) {
    out->push_back({r->block.get(), r, *loops});
    CollectBlocks(r->block->body, loops, out);
  }
}

// Blocks in program order, without the root (pointers into f: keep it alive).
inline std::vector<BlockSite> Blocks(const PrimFunc& f) {
  std::vector<BlockSite> out;
  std::vector<const ForNode*> loops;
  CollectBlocks(f.root_block().body, &loops, &out);
  return out;
}

inline std::vector<std::string> BlockNames(const PrimFunc& f) {
  std::vector<std::string> names;
  for (const auto& b : Blocks(f)) names.push_back(b.block->name);
  return names;
}

}  // namespace kiln::ir::testing
