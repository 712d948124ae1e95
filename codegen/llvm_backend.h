// The LLVM CPU backend: lowered IR -> LLVM IR -> an object file; a JIT that
// loads such an object and calls the kernel. LLVM types never appear here.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "codegen/kernel_abi.h"
#include "ir/prim_func.h"
#include "ir/target.h"

namespace kiln::codegen {

// The compiler refused the program or failed; what() says why.
class BuildError : public std::runtime_error {
 public:
  explicit BuildError(const std::string& msg) : std::runtime_error(msg) {}
};

// A relocatable object holding one kernel (kernel_abi.h convention).
struct ObjectCode {
  std::string symbol;  // the kernel's entry symbol
  std::string object;  // the object file's bytes (ELF)
  std::string target;  // the normalized target it was compiled for
};

// "host" -> this machine (CPU name and features through LLVM, all cores);
// anything else -> ir::Target::Parse. Either way in the canonical short form
// of codegen/target_features.h. Throws ir::TargetError.
ir::Target ResolveTarget(std::string_view spec);
ir::Target HostTarget();

// Where one build's time went, in CPU seconds of the calling thread (the
// build runs on it alone): for benchmarks and logs.
struct BuildProfile {
  double lower_secs = 0;     // ir::transform::Lower
  double emit_secs = 0;      // lowered IR -> LLVM IR
  double optimize_secs = 0;  // the LLVM O3 pipeline
  double codegen_secs = 0;   // LLVM IR -> object file (instruction selection to MC)
  double total_secs() const { return lower_secs + emit_secs + optimize_secs + codegen_secs; }
};
// Lowers `func` (ir::transform::Lower) and compiles it at O3 for `target`;
// fills *profile when it is not null. Throws BuildError. Safe to call from
// several threads at once.
ObjectCode BuildObject(const ir::PrimFunc& func, const ir::Target& target,
                       BuildProfile* profile = nullptr);
// The same lowered function as LLVM IR text / assembly text.
std::string EmitLLVMIR(const ir::PrimFunc& func, const ir::Target& target);
std::string EmitAssembly(const ir::PrimFunc& func, const ir::Target& target);

// An object loaded into this process through ORC LLJIT, with the Kiln
// runtime's symbols resolved. Throws BuildError if it does not link.
class JitKernel {
 public:
  static std::unique_ptr<JitKernel> Load(const ObjectCode& code);
  virtual ~JitKernel() = default;
  virtual kiln_kernel_fn entry() const = 0;
  int32_t Call(void* const* args) const { return entry()(args); }
};

}  // namespace kiln::codegen
