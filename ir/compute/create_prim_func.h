// Turns a graph of compute stages into a PrimFunc, as te.create_prim_func does.
//
// Structure (what later passes and design-space counts rely on):
//  * stages in post-DFS order from the arguments; one block per stage, named
//    after its tensor (made unique with "_1", "_2", ... like TVM's name supply);
//  * each block sits under serial loops over its spatial axes then its reduce
//    axes, loop vars named after the axes, block iter vars "v_" + that name,
//    each bound to its loop var with the loop's range as domain;
//  * a reduction has init `C[...] = identity` and body `C[...] = C[...] + x`
//    (T.max / T.min for those reducers);
//  * reads and writes are the point regions of the accesses in order of first
//    appearance (init, then body). As in TVM, a reduction block (one with an
//    init) does not list its output among its reads. Several different points
//    of one buffer are covered by that dimension's full extent;
//  * stages that are not arguments are allocated in the root block; function
//    attribute {"tir.noalias": True}.
// Unlike TVM, expressions are not run through the arithmetic simplifier: they
// are kept as written (the frontend folds constants while building them).
#pragma once

#include <vector>

#include "ir/compute/tensor.h"
#include "ir/prim_func.h"

namespace kiln::ir::compute {

// args: the function parameters in order (placeholders and outputs). Every
// placeholder the outputs depend on must be among them.
PrimFunc CreatePrimFunc(const std::vector<Tensor>& args);

}  // namespace kiln::ir::compute
