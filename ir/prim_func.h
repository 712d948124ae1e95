// A PrimFunc: one tensor program with buffer parameters and a root block.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/buffer.h"
#include "ir/stmt.h"

namespace kiln::ir {

struct PrimFunc {
  std::string name = "main";
  // Buffer parameters in call order (inputs first, outputs last, by convention).
  std::vector<Buffer> params;
  // Always a BlockRealize of the block named "root" with no iter vars; its
  // alloc_buffers are the function's intermediate buffers.
  Stmt body;
  // Function attributes, e.g. {"tir.noalias": T.bool(True)}; sorted by key.
  Annotations attrs;

  // The root block (body must be a well-formed root BlockRealize).
  const BlockNode& root_block() const;
};

// Wraps `stmt` into a root BlockRealize allocating `alloc_buffers`.
Stmt MakeRootBody(Stmt stmt, std::vector<Buffer> alloc_buffers = {},
                  Annotations annotations = {});

}  // namespace kiln::ir
