// BuildObject / EmitLLVMIR / EmitAssembly: lower, emit LLVM IR, optimize at
// O3 for the target machine, and print an object file or assembly.
//
// Build latency is what limits how many candidates a tuning round measures,
// so what each build repeats is kept small: the target machine is made once
// per thread and target (builds run on parallel threads, and a
// TargetMachine is not safe to share between them), objects are built
// without LLVM value names, and the O3 pipeline skips the passes that have
// nothing to do on Kiln kernels (kSkippedPasses).
// Everything else of O3 stays. Measured on design-space candidates of GMM
// (kernel time of the same candidate built both ways): without LLVM's
// heuristic unrolling kernels ran about 2x slower, without the SLP
// vectorizer, the loop vectorizer (for loops Kiln does not widen itself),
// DSE or IndVars some ran 1.3-5x slower, O2 instead of O3 cost about 9% on
// the candidates it changed, and CodeGenOpt::Default gave the same objects.
// Not inlining the .impl bodies (so that the function simplification
// pipeline runs once on them, not again on their caller) saved a quarter of
// the build time, but the second round is what promotes some accumulators
// to registers after unrolling (one candidate 1.8x slower).
#include "codegen/llvm_backend.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>

#include "codegen/llvm_codegen.h"
#include "ir/error.h"
#include "ir/transform/lower.h"
#include "ir/transform/verify_lowered.h"
#include "support/thread_cpu_time.h"

namespace kiln::codegen {
namespace {

// LLVM's loop unrollers size their work by a cost threshold, 300 at O3 and
// 150 at O2. Kiln states its index arithmetic in the form LLVM would reach
// itself (64-bit, no-wrap: llvm_codegen.cc), so a loop body costs fewer
// units than before and O3's threshold unrolls far more: on GMM candidates
// some blocks grew to thousands of instructions, builds took up to 6x longer
// in the machine schedulers, and the kernels ran slower (register spills).
// O2's threshold keeps unrolling near what the schedule asked for.
// Measured on 48 GMM:0 design-space candidates (znver3), both changes
// against the previous backend, builds and runs interleaved: build CPU time
// median -27%, mean -22%; kernel time geometric mean -11%, the fastest
// candidate unchanged. With O3's threshold the builds gained only -21% /
// -13%, and one candidate took 5x longer to build and ran 27% slower.
// The option is process-wide; a host that set it itself keeps its value.
constexpr const char* kUnrollThreshold = "150";

void InitializeLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    auto& options = llvm::cl::getRegisteredOptions();
    if (auto it = options.find("unroll-threshold"); it != options.end() &&
        it->second->getNumOccurrences() == 0)
      it->second->addOccurrence(0, "unroll-threshold", kUnrollThreshold);
  });
}

// Passes of the O3 pipeline that find nothing to do in the modules Kiln
// emits, or whose rewrite measured neutral on design-space candidates of
// GMM (kernel time, bench/runner_bench): interprocedural passes (a kernel
// module is a few functions with one call site each, which the inliner
// merges), OpenMP-specific ones, profile-guided LoopSink, and LoopIdiom,
// whose memset calls for zeroed accumulators run no faster than the loops.
// Skipping them saves a few per cent of each build and changes no result
// (llvm_backend_test checks every workload against the interpreter).
// LoopLoadElimination forwards a value stored in one iteration to a load in
// a later one (recurrences such as a[i + 1] = f(a[i])); tensor kernels keep
// such values in accumulators that LICM already promotes. It never changed
// an object of the 72 GMM, C2D and SFM design-space candidates measured
// (byte-identical with and without it), but the loop access analysis it
// runs is quadratic in a loop's memory accesses: on one explicitly unrolled
// conv2d candidate it was a third of the whole build (1.4 of 3.9 billion
// instructions under callgrind).
constexpr const char* kSkippedPasses[] = {
    "ArgumentPromotionPass", "CallSiteSplittingPass",  "CalledValuePropagationPass",
    "OpenMPOptPass",         "OpenMPOptCGSCCPass",     "LoopSinkPass",
    "Float2IntPass",         "LoopIdiomRecognizePass", "LoopLoadEliminationPass",
};

bool IsSkipped(llvm::StringRef pass) {
  return std::any_of(std::begin(kSkippedPasses), std::end(kSkippedPasses),
                     [&](const char* name) { return pass == name; });
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

// This thread's target machine for `target`, made on first use. A build
// takes it for its whole duration and no other thread sees it.
llvm::TargetMachine& ThreadTargetMachine(const ir::Target& target) {
  thread_local std::map<std::string, std::unique_ptr<llvm::TargetMachine>> machines;
  std::unique_ptr<llvm::TargetMachine>& tm = machines[target.ToString()];
  if (!tm) tm = MakeTargetMachine(target);
  return *tm;
}

void Optimize(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassInstrumentationCallbacks callbacks;
  callbacks.registerShouldRunOptionalPassCallback(
      [](llvm::StringRef pass, llvm::Any) { return !IsSkipped(pass); });
  llvm::PassBuilder pb(&tm, tuning, std::nullopt, &callbacks);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(m, mam);
}

// Which pass of the pipeline broke the lowered form: the first one after
// which the function was in it and no longer is (re-lowering pass by pass;
// only on the failure path). Empty when no pass got the function there.
std::string PassThatBrokeTheForm(const ir::PrimFunc& func) {
  bool reached = false;
  std::string breaker;
  ir::transform::Lower(func, [&](const std::string& pass, const ir::PrimFunc& f) {
    if (!breaker.empty()) return;
    const bool ok = ir::transform::VerifyLowered(f).empty();
    if (ok) reached = true;
    if (reached && !ok) breaker = pass;
  });
  return breaker;
}

// Lowers for the CPU emitter and checks the result against the contract of
// ir/transform/lower.h that the emitter relies on, on every build: it costs
// well under 1% of one (bench/verify_lowered_bench.cc), and a pass that
// breaks the contract then fails the build naming the pass and what it
// broke, instead of miscompiling.
ir::PrimFunc LowerForBackend(const ir::PrimFunc& func) {
  ir::PrimFunc lowered;
  try {
    lowered = ir::transform::Lower(func);
  } catch (const ir::IRError& e) {
    throw BuildError(std::string("lowering failed: ") + e.what());
  }
  const std::vector<std::string> issues = ir::transform::VerifyLowered(lowered);
  if (!issues.empty()) {
    const std::string pass = PassThatBrokeTheForm(func);
    std::string msg = "lowering failed: the lowered program breaks the contract of "
                      "ir/transform/lower.h" +
                      (pass.empty() ? std::string(" (no pass reached the lowered form)")
                                    : " (broken by pass " + pass + ")") +
                      ":";
    for (const std::string& i : issues) msg += "\n  " + i;
    throw BuildError(msg);
  }
  return lowered;
}

// Adds the thread CPU time since the last Lap() to *slot when profiling (a
// build runs on one thread, and on a shared machine its wall time also
// counts the waits for a core).
class Stopwatch {
 public:
  explicit Stopwatch(bool on) : on_(on), last_(on ? support::ThreadCpuSeconds() : 0) {}
  void Lap(double* slot) {
    if (!on_) return;
    const double now = support::ThreadCpuSeconds();
    *slot += now - last_;
    last_ = now;
  }

 private:
  bool on_;
  double last_;
};

// One compilation: the optimized module with its context and this thread's
// machine for the target.
struct Compiled {
  std::unique_ptr<llvm::LLVMContext> ctx = std::make_unique<llvm::LLVMContext>();
  llvm::TargetMachine* tm = nullptr;
  std::unique_ptr<llvm::Module> module;
  std::string symbol;
};

// `readable`: the module is printed for people (keeps value names).
Compiled Compile(const ir::PrimFunc& func, const ir::Target& target, bool readable,
                 BuildProfile* profile = nullptr) {
  BuildProfile unused;
  BuildProfile& p = profile ? *profile : unused;
  Stopwatch watch(profile != nullptr);
  Compiled c;
  // Value names only serve people reading IR or assembly; in an object they
  // are dropped anyway, and keeping them costs every build about a tenth of
  // its time (each instruction the unroller clones gets a new unique name).
  if (!readable) c.ctx->setDiscardValueNames(true);
  c.tm = &ThreadTargetMachine(target);
  ir::PrimFunc lowered = LowerForBackend(func);
  watch.Lap(&p.lower_secs);
  c.symbol = lowered.name;
  c.module = EmitModule(lowered, *c.ctx, *c.tm);
  watch.Lap(&p.emit_secs);
  Optimize(*c.module, *c.tm);
  watch.Lap(&p.optimize_secs);
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

ObjectCode BuildObject(const ir::PrimFunc& func, const ir::Target& target, BuildProfile* profile) {
  if (profile) *profile = BuildProfile{};
  Compiled c = Compile(func, target, /*readable=*/false, profile);
  Stopwatch watch(profile != nullptr);
  ObjectCode out;
  out.symbol = c.symbol;
  out.object = EmitFile(c, llvm::CGFT_ObjectFile);
  if (profile) watch.Lap(&profile->codegen_secs);
  out.target = target.ToString();
  return out;
}

std::string EmitLLVMIR(const ir::PrimFunc& func, const ir::Target& target) {
  Compiled c = Compile(func, target, /*readable=*/true);
  std::string text;
  llvm::raw_string_ostream os(text);
  c.module->print(os, nullptr);
  return os.str();
}

std::string EmitAssembly(const ir::PrimFunc& func, const ir::Target& target) {
  Compiled c = Compile(func, target, /*readable=*/true);
  return EmitFile(c, llvm::CGFT_AssemblyFile);
}

}  // namespace kiln::codegen
