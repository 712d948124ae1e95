// BuildObject / EmitLLVMIR / EmitAssembly: lower, emit LLVM IR, optimize at
// O3 for the target machine, and print an object file or assembly.
#include "codegen/llvm_backend.h"

#include <memory>
#include <mutex>
#include <string>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>

#include "codegen/llvm_codegen.h"
#include "ir/error.h"
#include "ir/transform/lower.h"

namespace kiln::codegen {
namespace {

void InitializeLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

std::unique_ptr<llvm::TargetMachine> MakeTargetMachine(const ir::Target& target) {
  if (target.kind != ir::Target::Kind::kLLVM)
    throw BuildError("the CPU backend compiles for 'llvm' targets, not '" + target.ToString() + "'");
  InitializeLLVM();
  const std::string triple = target.mtriple.empty() ? llvm::sys::getProcessTriple() : target.mtriple;
  std::string err;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!t) throw BuildError("target triple '" + triple + "' is not available in this build of LLVM: " + err);
  std::string features;
  for (const auto& f : target.mattr) features += (features.empty() ? "" : ",") + f;
  llvm::TargetOptions options;
  // Multiply-add contraction, as TVM allows: the output check's float
  // tolerance covers the difference in rounding.
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  const std::string cpu = target.mcpu.empty() ? "generic" : target.mcpu;
  std::unique_ptr<llvm::TargetMachine> tm(t->createTargetMachine(
      triple, cpu, features, options, llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOpt::Aggressive));
  if (!tm) throw BuildError("LLVM cannot make a target machine for '" + target.ToString() + "'");
  return tm;
}

void Optimize(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder pb(&tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(m, mam);
}

ir::PrimFunc LowerForBackend(const ir::PrimFunc& func) {
  try {
    return ir::transform::Lower(func);
  } catch (const ir::IRError& e) {
    throw BuildError(std::string("lowering failed: ") + e.what());
  }
}

// One compilation: the optimized module with its context and machine.
struct Compiled {
  std::unique_ptr<llvm::LLVMContext> ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::TargetMachine> tm;
  std::unique_ptr<llvm::Module> module;
  std::string symbol;
};

Compiled Compile(const ir::PrimFunc& func, const ir::Target& target, bool optimize) {
  Compiled c;
  c.tm = MakeTargetMachine(target);
  ir::PrimFunc lowered = LowerForBackend(func);
  c.symbol = lowered.name;
  c.module = EmitModule(lowered, *c.ctx, *c.tm);
  if (optimize) Optimize(*c.module, *c.tm);
  return c;
}

std::string EmitFile(Compiled& c, llvm::CodeGenFileType type) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (c.tm->addPassesToEmitFile(pm, os, nullptr, type))
    throw BuildError("LLVM cannot emit this file type for the target");
  pm.run(*c.module);
  return std::string(buffer.begin(), buffer.end());
}

}  // namespace

ObjectCode BuildObject(const ir::PrimFunc& func, const ir::Target& target) {
  Compiled c = Compile(func, target, true);
  ObjectCode out;
  out.symbol = c.symbol;
  out.object = EmitFile(c, llvm::CGFT_ObjectFile);
  out.target = target.ToString();
  return out;
}

std::string EmitLLVMIR(const ir::PrimFunc& func, const ir::Target& target) {
  Compiled c = Compile(func, target, true);
  std::string text;
  llvm::raw_string_ostream os(text);
  c.module->print(os, nullptr);
  return os.str();
}

std::string EmitAssembly(const ir::PrimFunc& func, const ir::Target& target) {
  Compiled c = Compile(func, target, true);
  return EmitFile(c, llvm::CGFT_AssemblyFile);
}

}  // namespace kiln::codegen
