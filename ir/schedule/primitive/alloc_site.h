// Where a buffer is allocated, for the primitives that may only change a
// buffer a block allocates (set_scope.cc, storage_align.cc): a function
// parameter's scope and layout are fixed by the caller.
#pragma once

#include "ir/buffer.h"
#include "ir/schedule/stmt_path.h"

namespace kiln::ir {

// True if a block on `path` (the block at path.back() or one enclosing it)
// lists `buffer` among its alloc_buffers.
bool AllocatedOnPath(const StmtPath& path, const Buffer& buffer);

}  // namespace kiln::ir
