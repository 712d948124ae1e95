// "host": this machine as an LLVM target. The CPU name alone is not enough:
// LLVM may name a CPU whose default feature set understates what this one
// has (or a virtual machine hides), so the features LLVM detects on this CPU
// are written out as -mattr, and the core count as -num-cores.
#include <algorithm>
#include <string>
#include <thread>

#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>

#include "codegen/llvm_backend.h"

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
    for (const auto& kv : features)
      if (kv.getValue()) attrs.push_back("+" + kv.getKey().str());
    std::sort(attrs.begin(), attrs.end());
    t.mattr = std::move(attrs);
  }
  t.num_cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Normalize through the parser so that "host" and its spelled-out form
  // compare equal.
  return ir::Target::Parse(t.ToString());
}

ir::Target ResolveTarget(std::string_view spec) {
  std::string_view s = spec;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s == "host") return HostTarget();
  return ir::Target::Parse(spec);
}

}  // namespace kiln::codegen
