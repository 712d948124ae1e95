// "host": this machine as an LLVM target. The CPU name alone is not enough:
// LLVM may name a CPU whose default feature set differs from what this one
// has (or what a virtual machine shows), so the features LLVM detects here
// are taken whole, then written in the canonical short form
// (codegen/target_features.h): the CPU name, the features that differ from
// it, and the core count.
#include <algorithm>
#include <string>

#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>

#include "codegen/llvm_backend.h"
#include "codegen/target_features.h"
#include "support/cores.h"

namespace kiln::codegen {

ir::Target HostTarget() {
  ir::Target t;
  t.kind = ir::Target::Kind::kLLVM;
  t.mtriple = llvm::sys::getProcessTriple();
  t.mcpu = llvm::sys::getHostCPUName().str();
  if (t.mcpu.empty() || t.mcpu == "generic") t.mcpu.clear();
  llvm::StringMap<bool> features;
  if (llvm::sys::getHostCPUFeatures(features)) {
    std::vector<std::string> attrs;
    // Both signs: a feature the CPU name implies but this machine lacks (a
    // VM hiding AVX-512) must be written as off.
    for (const auto& kv : features) attrs.push_back((kv.getValue() ? "+" : "-") + kv.getKey().str());
    std::sort(attrs.begin(), attrs.end());
    t.mattr = std::move(attrs);
  }
  t.num_cores = support::HardwareThreads();
  return CanonicalTarget(ir::Target::Parse(t.ToString()));
}

ir::Target ResolveTarget(std::string_view spec) {
  std::string_view s = spec;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s == "host") return HostTarget();
  return CanonicalTarget(ir::Target::Parse(spec));
}

}  // namespace kiln::codegen
