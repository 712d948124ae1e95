#include "tools/target_spec.h"

#include <stdexcept>

#include "codegen/backend_version.h"
#include "codegen/llvm_backend.h"

namespace kiln::tools {

ir::Target ResolveTargetFlag(const std::string& spec) {
  try {
    return codegen::ResolveTarget(spec);
  } catch (const std::exception& e) {
    throw std::runtime_error("--target '" + spec + "': " + e.what());
  }
}

std::string MachineFingerprint(const ir::Target& target) {
  return target.ToString() + "; kiln 0.1.0; " + codegen::BackendVersion();
}

}  // namespace kiln::tools
