#include "ir/schedule/primitive/alloc_site.h"

#include "ir/stmt.h"

namespace kiln::ir {

bool AllocatedOnPath(const StmtPath& path, const Buffer& buffer) {
  bool allocated = false;
  for (const Stmt& s : path) {
    const auto* r = s.as<BlockRealizeNode>();
    if (!r) continue;
    for (const Buffer& a : r->block->alloc_buffers) allocated = allocated || a.same_as(buffer);
  }
  return allocated;
}

}  // namespace kiln::ir
