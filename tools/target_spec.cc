#include "tools/target_spec.h"

#include <stdexcept>

#include "codegen/backend_version.h"
#include "codegen/cuda/cuda_driver.h"
#include "codegen/cuda/nvrtc_compiler.h"
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
  codegen::CudaDeviceInfo info;
  try {
    info = codegen::ProbeCudaDevice();
  } catch (const codegen::CudaUnavailable& e) {
    throw std::runtime_error("cannot measure on '" + target.ToString() +
                             "': this machine cannot run CUDA kernels: " + e.what() +
                             " (kiln tune --build-only builds and checks the kernels without a "
                             "GPU; kiln lower --target '" + target.ToString() +
                             "' --emit cuda shows them)");
  }
  if (codegen::SmVersion(target.arch) > codegen::SmVersion(info.arch)) {
    throw std::runtime_error("cannot measure on '" + target.ToString() + "': this machine's GPU, " +
                             info.name + ", is " + info.arch + " (use --target 'cuda -arch=" +
                             info.arch + "')");
  }
}

std::string MachineFingerprint(const ir::Target& target) {
  std::string fp = target.ToString() + "; kiln " KILN_VERSION_STRING "; ";
  if (target.kind != ir::Target::Kind::kCUDA) return fp + codegen::BackendVersion();
  // The GPU, its driver and the compiler that made the PTX: what decides a
  // CUDA kernel's time beside the code.
  std::string device;
  try {
    device = codegen::DescribeCudaDevice(codegen::ProbeCudaDevice());
  } catch (const codegen::CudaUnavailable&) {
    device = "no GPU";
  }
  return fp + device + "; " + codegen::NvrtcVersion();
}

}  // namespace kiln::tools
