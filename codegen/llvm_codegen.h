// Lowered Kiln IR -> an LLVM module (internal to codegen/: it names LLVM
// types, so only codegen/*.cc may include it).
#pragma once

#include <memory>

#include "ir/prim_func.h"

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
}  // namespace llvm

namespace kiln::codegen {

// Emits `lowered` (the output of ir::transform::Lower) as one external
// function named lowered.name with the kernel_abi.h convention, plus an
// internal body function per parallel loop. The module is not optimized.
// Throws BuildError on IR the CPU backend cannot compile (thread bindings,
// symbolic shapes, bfloat16 arithmetic, a name that is not a C identifier).
std::unique_ptr<llvm::Module> EmitModule(const ir::PrimFunc& lowered, llvm::LLVMContext& ctx,
                                         llvm::TargetMachine& tm);

}  // namespace kiln::codegen
