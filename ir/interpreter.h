// The reference interpreter: runs a PrimFunc on host arrays with TensorIR
// semantics, serially, checking every buffer access. It is the ground truth
// that every scheduled and compiled kernel is checked against.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "ir/ndarray.h"
#include "ir/prim_func.h"

namespace kiln::ir {

// A run-time failure of the interpreted program (out-of-bounds access,
// integer division by zero, a block iteration value outside its domain) or IR
// the interpreter cannot run (undefined variable, unknown buffer). The message
// names the block: "block 'C': load A[128, 0] is out of bounds of shape (128, 128)".
class InterpreterError : public std::runtime_error {
 public:
  explicit InterpreterError(const std::string& msg) : std::runtime_error(msg) {}
};

// Runs f on args (one per parameter, in order). Each argument's dtype and
// shape are checked against its parameter first; a parameter extent that is a
// variable is bound from the argument. Semantics:
//  - every loop kind runs serially, in order, except in a GPU kernel whose
//    threads communicate (it has a barrier or a warp shuffle, which only GPU
//    lowering makes): each of its thread blocks runs its threads side by
//    side, one at a time in a fixed order, with one copy of each shared
//    buffer per block (ir/interpreter/thread_block.h);
//  - a block runs only where its predicate holds; its init runs when every
//    reduction iteration variable is at its domain minimum;
//  - a block's alloc_buffers live from block entry to exit and start filled
//    with NaN (floats) or 0xA5 bytes (integers), so reads before writes show;
//  - integer arithmetic wraps at the type's width; float results are rounded
//    to their type after every operation; casts saturate instead of
//    overflowing.
void Interpret(const PrimFunc& f, std::vector<NDArray*> args);

// Convenience: runs f on args in place.
void Interpret(const PrimFunc& f, std::vector<NDArray>& args);

}  // namespace kiln::ir
