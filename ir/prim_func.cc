#include "ir/prim_func.h"

#include "ir/error.h"
#include "ir/op.h"

namespace kiln::ir {

const BlockNode& PrimFunc::root_block() const {
  const auto* realize = body.as<BlockRealizeNode>();
  if (realize == nullptr || !realize->block.defined()) {
    throw IRError("function '" + name + "': body is not a root block");
  }
  return *realize->block.get();
}

Stmt MakeRootBody(Stmt stmt, std::vector<Buffer> alloc_buffers, Annotations annotations) {
  BlockNode root;
  root.name = "root";
  root.body = std::move(stmt);
  root.alloc_buffers = std::move(alloc_buffers);
  root.annotations = std::move(annotations);
  return BlockRealize({}, BoolImm(true), MakeBlock(std::move(root)));
}

}  // namespace kiln::ir
