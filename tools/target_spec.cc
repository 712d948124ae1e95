#include "tools/target_spec.h"

#include <stdexcept>

#include "codegen/backend_version.h"
#include "codegen/cuda/cuda_driver.h"
#include "codegen/llvm_backend.h"

namespace kiln::tools {

ir::Target ResolveTargetFlag(const std::string& spec) {
  try {
    return codegen::ResolveTarget(spec);
  } catch (const std::exception& e) {
    throw std::runtime_error("--target '" + spec + "': " + e.what());
  }
}

void RequireMeasurableTarget(const ir::Target& target) {
  if (target.kind != ir::Target::Kind::kCUDA) return;
  std::string machine;
  try {
    codegen::CudaDeviceInfo info = codegen::ProbeCudaDevice();
    machine = "this machine has " + info.name + " (" + info.arch + ")";
  } catch (const codegen::CudaUnavailable& e) {
    machine = std::string("this machine cannot run CUDA kernels: ") + e.what();
  }
  throw std::runtime_error("cannot measure on '" + target.ToString() + "': " + machine +
                           "; and Kiln has no GPU runner yet (kiln lower --target '" +
                           target.ToString() + "' --emit cuda shows the generated kernel)");
}

std::string MachineFingerprint(const ir::Target& target) {
  return target.ToString() + "; kiln " KILN_VERSION_STRING "; " + codegen::BackendVersion();
}

}  // namespace kiln::tools
