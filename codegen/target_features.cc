#include "codegen/target_features.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

namespace kiln::codegen {
namespace {

std::string DefaultTriple() { return llvm::Triple::normalize(llvm::sys::getDefaultTargetTriple()); }

std::string TripleOf(const ir::Target& t) {
  return t.mtriple.empty() ? DefaultTriple() : llvm::Triple::normalize(t.mtriple);
}

std::string Join(const std::vector<std::string>& features) {
  std::string s;
  for (const std::string& f : features) s += (s.empty() ? "" : ",") + f;
  return s;
}

// Feature names of the host architecture as LLVM's host detection knows
// them (every CPUID-style feature it reads, on or off): the ISA features.
// LLVM 16 does not list a subtarget's feature table publicly, and its feature
// bits also hold tuning flags that differ between CPUs of the same ISA, so
// features are compared by these names.
const std::vector<std::string>& HostFeatureNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    llvm::StringMap<bool> features;
    if (llvm::sys::getHostCPUFeatures(features)) {
      for (const auto& kv : features) out.push_back(kv.getKey().str());
    }
    std::sort(out.begin(), out.end());
    return out;
  }();
  return names;
}

// Features that only the operating system or explicit intrinsics use: no
// kernel Kiln emits can contain their instructions, so a machine that lacks
// one (virtual machines hide MWAITX and RDPRU, add shadow stacks, ...) runs
// the same code. They are left out of canonical targets and of
// compatibility, so that "llvm -mcpu=znver3 -num-cores=2" names a Zen 3 VM
// as well as the metal. The names are LLVM 16's x86 ones; other
// architectures have none listed.
bool IsSystemFeature(const std::string& name) {
  static const char* const kSystem[] = {
      "cldemote", "clflushopt", "clwb",     "clzero",   "enqcmd",   "fsgsbase", "fxsr",
      "hreset",   "ibt",        "invpcid",  "kl",       "lwp",      "movdir64b", "movdiri",
      "mwaitx",   "pconfig",    "pku",      "ptwrite",  "rdpid",    "rdpru",    "rdrnd",
      "rdseed",   "rtm",        "serialize", "sgx",     "shstk",    "tsxldtrk", "uintr",
      "waitpkg",  "wbnoinvd",   "widekl",   "xsave",    "xsavec",   "xsaveopt", "xsaves",
  };
  return std::any_of(std::begin(kSystem), std::end(kSystem),
                     [&](const char* s) { return name == s; });
}

std::vector<std::string> WithoutSystemFeatures(const std::vector<std::string>& mattr) {
  std::vector<std::string> out;
  for (const std::string& f : mattr)
    if (!IsSystemFeature(f.substr(1))) out.push_back(f);
  return out;
}

// The subtargets LLVM makes for one triple. The CPU name is checked before
// use so that LLVM never prints its "not a recognized processor" warning.
class Subtargets {
 public:
  explicit Subtargets(const std::string& triple) : triple_(triple) {
    static std::once_flag once;
    std::call_once(once, [] {
      llvm::InitializeNativeTarget();
      llvm::InitializeNativeTargetAsmPrinter();
    });
    std::string err;
    target_ = llvm::TargetRegistry::lookupTarget(triple, err);
    if (target_ == nullptr) {
      throw ir::TargetError("target triple '" + triple +
                            "' is not available in this build of LLVM: " + err);
    }
    generic_.reset(target_->createMCSubtargetInfo(triple, "", ""));
    same_arch_as_host_ =
        llvm::Triple(triple).getArch() == llvm::Triple(llvm::sys::getProcessTriple()).getArch();
  }

  bool KnowsCpu(const std::string& cpu) const {
    return cpu.empty() || generic_->isCPUStringValid(cpu);
  }

  // Every feature bit (ISA and tuning) of cpu with mattr applied in order.
  llvm::FeatureBitset Bits(const std::string& cpu, const std::vector<std::string>& mattr) const {
    std::unique_ptr<llvm::MCSubtargetInfo> sti(
        target_->createMCSubtargetInfo(triple_, KnowsCpu(cpu) ? cpu : "", Join(mattr)));
    return sti->getFeatureBits();
  }

  // The ISA feature names enabled for (cpu, mattr), sorted: a name is on
  // when asking for it adds nothing.
  std::vector<std::string> Enabled(const std::string& cpu, const std::vector<std::string>& mattr) const {
    std::vector<std::string> names = same_arch_as_host_ ? HostFeatureNames() : std::vector<std::string>{};
    for (const std::string& f : mattr) names.push_back(f.substr(1));
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    const llvm::FeatureBitset base = Bits(cpu, mattr);
    std::vector<std::string> on;
    std::vector<std::string> with = mattr;
    with.emplace_back();
    for (const std::string& name : names) {
      with.back() = "+" + name;
      if (Bits(cpu, with) == base) on.push_back(name);
    }
    return on;
  }

 private:
  std::string triple_;
  const llvm::Target* target_ = nullptr;
  std::unique_ptr<llvm::MCSubtargetInfo> generic_;
  bool same_arch_as_host_ = false;
};

ir::Target Canonicalize(const ir::Target& in) {
  ir::Target t = in;
  const std::string triple = TripleOf(in);
  // One spelling per triple: the default one is dropped, any other is
  // LLVM's normalized form ("x86_64-linux-gnu" -> "x86_64-unknown-linux-gnu").
  t.mtriple = triple == DefaultTriple() ? std::string() : triple;
  Subtargets sub(triple);
  if (!sub.KnowsCpu(in.mcpu)) return ir::Target::Parse(t.ToString());
  // Keep only the -mattr entries it takes to reach the same feature bits:
  // one the CPU implies goes, and so does one that another entry settles
  // ("-avx512f" turns off every AVX-512 extension). Entries are tried in the
  // sorted order the parsed target hands to LLVM.
  std::vector<std::string> kept = WithoutSystemFeatures(in.mattr);
  const llvm::FeatureBitset want = sub.Bits(in.mcpu, kept);
  for (size_t i = 0; i < kept.size();) {
    std::vector<std::string> without = kept;
    without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
    if (sub.Bits(in.mcpu, without) == want) {
      kept = std::move(without);
    } else {
      ++i;
    }
  }
  t.mattr = kept;
  return ir::Target::Parse(t.ToString());
}

}  // namespace

ir::Target CanonicalTarget(const ir::Target& target) {
  if (target.kind != ir::Target::Kind::kLLVM) return target;
  // The same few targets are asked again and again (every query, every
  // record a lookup compares); each answer costs a few hundred subtargets.
  static std::mutex mu;
  static std::map<std::string, ir::Target> memo;
  const std::string key = target.ToString();
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
  }
  ir::Target canonical = Canonicalize(target);
  std::lock_guard<std::mutex> lock(mu);
  memo.emplace(key, canonical);
  return canonical;
}

std::vector<std::string> EnabledFeatures(const ir::Target& target) {
  if (target.kind != ir::Target::Kind::kLLVM)
    throw ir::TargetError("target '" + target.ToString() + "' is not a CPU ('llvm') target");
  return Subtargets(TripleOf(target)).Enabled(target.mcpu, target.mattr);
}

bool TargetHasFeature(const ir::Target& target, const std::string& feature) {
  if (target.kind != ir::Target::Kind::kLLVM) return false;
  const std::vector<std::string> on = EnabledFeatures(target);
  return std::binary_search(on.begin(), on.end(), feature);
}

namespace {

// Why the features of two targets cannot be compared: not both `llvm`,
// other triples, or a CPU this LLVM does not know. Empty when they can
// (CompatibleTarget and SameVectorUnits both start here).
std::string WhyNotComparable(const ir::Target& a, const ir::Target& b) {
  if (a.kind != ir::Target::Kind::kLLVM || b.kind != ir::Target::Kind::kLLVM)
    return "only CPU ('llvm') targets compare by features; other kinds match exactly";
  if (TripleOf(a) != TripleOf(b)) return "triple " + TripleOf(a) + " differs from " + TripleOf(b);
  const Subtargets sub(TripleOf(a));
  for (const ir::Target* t : {&a, &b}) {
    if (!sub.KnowsCpu(t->mcpu))
      return "this LLVM does not know the CPU '" + t->mcpu + "', so its features are unknown";
  }
  return "";
}

}  // namespace

bool CompatibleTarget(const ir::Target& record, const ir::Target& asking, std::string* why) {
  auto fail = [&](const std::string& reason) {
    if (why != nullptr) *why = reason;
    return false;
  };
  if (std::string reason = WhyNotComparable(record, asking); !reason.empty()) return fail(reason);
  if (record.num_cores != asking.num_cores) {
    return fail("measured on " + std::to_string(record.num_cores) + " core(s), asked for " +
                std::to_string(asking.num_cores));
  }
  const Subtargets sub(TripleOf(asking));
  const std::vector<std::string> have = sub.Enabled(asking.mcpu, asking.mattr);
  std::vector<std::string> missing;
  for (const std::string& f : sub.Enabled(record.mcpu, record.mattr)) {
    if (!IsSystemFeature(f) && !std::binary_search(have.begin(), have.end(), f)) missing.push_back(f);
  }
  if (!missing.empty()) {
    std::string list;
    for (size_t i = 0; i < missing.size() && i < 8; ++i) list += (i ? ", " : "") + missing[i];
    if (missing.size() > 8) list += ", ... (" + std::to_string(missing.size()) + " in all)";
    return fail("it uses features the asking target lacks: " + list);
  }
  return true;
}

bool SameVectorUnits(const ir::Target& a, const ir::Target& b, std::string* why) {
  auto fail = [&](const std::string& reason) {
    if (why != nullptr) *why = reason;
    return false;
  };
  if (std::string reason = WhyNotComparable(a, b); !reason.empty()) return fail(reason);
  const Subtargets sub(TripleOf(a));
  const std::vector<std::string> fa = sub.Enabled(a.mcpu, a.mattr);
  const std::vector<std::string> fb = sub.Enabled(b.mcpu, b.mattr);
  for (const char* f : {"avx512f", "avx2", "avx", "fma", "sse4.2", "neon", "sve", "sve2"}) {
    const bool in_a = std::binary_search(fa.begin(), fa.end(), f);
    const bool in_b = std::binary_search(fb.begin(), fb.end(), f);
    if (in_a != in_b) {
      return fail(std::string(f) + " is " + (in_a ? "on" : "off") + " for '" + a.ToString() +
                  "' and " + (in_b ? "on" : "off") + " for '" + b.ToString() + "'");
    }
  }
  return true;
}

}  // namespace kiln::codegen
