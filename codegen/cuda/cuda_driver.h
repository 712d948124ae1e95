// The CUDA driver API (libcuda.so.1), loaded with dlopen when first asked for
// and never linked, so that Kiln builds and runs on machines without an
// NVIDIA driver; there every use says so clearly.
#pragma once

#include <stdexcept>
#include <string>

namespace kiln::codegen {

// No usable driver or device; what() says which and why.
class CudaUnavailable : public std::runtime_error {
 public:
  explicit CudaUnavailable(const std::string& msg) : std::runtime_error(msg) {}
};

struct CudaDeviceInfo {
  int count = 0;             // devices the driver sees
  std::string name;          // device 0, "NVIDIA H200"
  std::string arch;          // device 0, "sm_90"
  int driver_version = 0;    // e.g. 13000
};

// Loads the driver (once per process), initializes it and describes device
// 0. Throws CudaUnavailable when libcuda.so.1 cannot be loaded, cuInit fails
// (a stub library, no device) or no device exists.
CudaDeviceInfo ProbeCudaDevice();

// The path the driver is loaded from; "libcuda.so.1" unless the environment
// variable KILN_LIBCUDA names another file (tests point it at the toolkit's
// stub library).
std::string CudaDriverLibrary();

}  // namespace kiln::codegen
