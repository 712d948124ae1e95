// The CUDA backend's second half: CUDA C++ -> PTX and cubin, in process and
// without a GPU. NVRTC compiles the source; nvJitLink assembles PTX for one
// architecture, which is the same check ptxas makes (it runs ptxas's
// assembler in process).
#pragma once

#include <string>

namespace kiln::codegen {

struct CudaBinary {
  std::string arch;   // "sm_90"
  std::string ptx;    // PTX text for compute_XX
  std::string cubin;  // ELF for sm_XX, assembled from the PTX by nvJitLink
  std::string log;    // NVRTC's and nvJitLink's messages (warnings)
};

// "sm_90" -> 90; throws BuildError for anything else.
int SmVersion(const std::string& arch);

// Compiles `source` with NVRTC (--std=c++17, --gpu-architecture=compute_XX;
// fast math off, fused multiply-add on: NVRTC's defaults), then assembles the PTX with nvJitLink for sm_XX. Throws
// BuildError with the compiler's log on failure. `name` labels the source in
// messages.
CudaBinary CompileCuda(const std::string& source, const std::string& arch,
                       const std::string& name = "kiln_kernel.cu");

// The CUDA toolkit's include directory, which a source with #include lines
// (cuda_fp16.h for half, mma.h for tensor cores) needs: $KILN_CUDA_INCLUDE,
// $CUDA_HOME/include, $CUDA_PATH/include or /usr/local/cuda/include, the
// first holding cuda_fp16.h and mma.h. Throws BuildError naming where it looked.
std::string CudaIncludeDir();

// Assembles PTX for `arch` with nvJitLink and returns the cubin; throws
// BuildError with nvJitLink's error log.
std::string AssemblePtx(const std::string& ptx, const std::string& arch);

// "NVRTC 13.0"
std::string NvrtcVersion();

}  // namespace kiln::codegen
