// JitKernel: loads a kernel object into this process through ORC LLJIT.
//
// One LLJIT instance serves the whole process (creating one costs far more
// than loading an object); each kernel gets its own JITDylib, so kernels with
// the same symbol do not collide, and the dylib is removed with the kernel.
// Symbols the object needs resolve, in order, to the Kiln runtime linked into
// this process and then to the process's own libraries (libm, libc).
#include <atomic>
#include <mutex>
#include <string>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>

#include "codegen/kernel_abi.h"
#include "codegen/llvm_backend.h"

namespace kiln::codegen {
namespace {

std::string ErrorText(llvm::Error e) { return llvm::toString(std::move(e)); }

llvm::orc::LLJIT& ProcessJit() {
  static std::once_flag once;
  static llvm::orc::LLJIT* jit = nullptr;  // lives as long as the process
  static std::string failure;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto created = llvm::orc::LLJITBuilder().create();
    if (!created) {
      failure = ErrorText(created.takeError());
      return;
    }
    jit = created->release();
  });
  if (!jit) throw BuildError("cannot start the LLVM JIT: " + failure);
  return *jit;
}

class OrcKernel : public JitKernel {
 public:
  OrcKernel(llvm::orc::JITDylib* dylib, kiln_kernel_fn fn) : dylib_(dylib), fn_(fn) {}
  ~OrcKernel() override {
    std::lock_guard<std::mutex> lock(Mutex());
    llvm::consumeError(ProcessJit().getExecutionSession().removeJITDylib(*dylib_));
  }
  kiln_kernel_fn entry() const override { return fn_; }
  static std::mutex& Mutex() {
    static std::mutex mu;
    return mu;
  }

 private:
  llvm::orc::JITDylib* dylib_;
  kiln_kernel_fn fn_;
};

}  // namespace

std::unique_ptr<JitKernel> JitKernel::Load(const ObjectCode& code) {
  llvm::orc::LLJIT& jit = ProcessJit();
  std::lock_guard<std::mutex> lock(OrcKernel::Mutex());
  static std::atomic<int64_t> counter{0};
  auto& es = jit.getExecutionSession();
  auto dylib = es.createJITDylib("kiln.kernel." + std::to_string(counter++));
  if (!dylib) throw BuildError("JIT: " + ErrorText(dylib.takeError()));
  llvm::orc::JITDylib& jd = *dylib;

  llvm::orc::SymbolMap runtime;
  auto flags = llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable;
  runtime[jit.mangleAndIntern("kiln_parallel_for")] = llvm::JITEvaluatedSymbol(
      llvm::pointerToJITTargetAddress(&kiln_parallel_for), flags);
  runtime[jit.mangleAndIntern("kiln_runtime_set_num_threads")] = llvm::JITEvaluatedSymbol(
      llvm::pointerToJITTargetAddress(&kiln_runtime_set_num_threads), flags);
  auto fail = [&](const std::string& what, llvm::Error e) -> std::unique_ptr<JitKernel> {
    std::string msg = "JIT: " + what + ": " + ErrorText(std::move(e));
    llvm::consumeError(es.removeJITDylib(jd));
    throw BuildError(msg);
  };
  if (auto e = jd.define(llvm::orc::absoluteSymbols(std::move(runtime)))) return fail("runtime symbols", std::move(e));
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      jit.getDataLayout().getGlobalPrefix());
  if (!process) return fail("process symbols", process.takeError());
  jd.addGenerator(std::move(*process));

  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(code.object, "kiln-kernel-" + code.symbol);
  if (auto e = jit.addObjectFile(jd, std::move(buffer))) return fail("cannot load the object", std::move(e));
  auto sym = jit.lookup(jd, code.symbol);
  if (!sym) return fail("cannot find kernel symbol '" + code.symbol + "'", sym.takeError());
  return std::make_unique<OrcKernel>(&jd, sym->toPtr<kiln_kernel_fn>());
}

}  // namespace kiln::codegen
