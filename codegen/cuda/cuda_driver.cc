#include "codegen/cuda/cuda_driver.h"

#include <cuda.h>
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace kiln::codegen {
namespace {

// The entry points by their exported (versioned) names; cuda.h's macros map
// the plain names onto these in code that links the driver.
struct DriverApi {
  void* handle = nullptr;
  std::string error;  // why loading failed; empty when loaded
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*driver_get_version)(int*) = nullptr;
  CUresult (*device_get_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*get_error_name)(CUresult, const char**) = nullptr;
};

const DriverApi& Api() {
  static DriverApi api;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string path = CudaDriverLibrary();
    api.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (api.handle == nullptr) {
      const char* e = dlerror();
      api.error = "the CUDA driver (" + path + ") cannot be loaded: " +
                  (e ? e : "unknown error") + "; this machine has no NVIDIA driver";
      return;
    }
    auto sym = [&](const char* name, auto* fn) {
      void* p = dlsym(api.handle, name);
      if (p == nullptr && api.error.empty()) {
        api.error = "the CUDA driver (" + path + ") has no " + name + "; it is too old";
      }
      *fn = reinterpret_cast<std::remove_reference_t<decltype(*fn)>>(p);
    };
    sym("cuInit", &api.init);
    sym("cuDriverGetVersion", &api.driver_get_version);
    sym("cuDeviceGetCount", &api.device_get_count);
    sym("cuDeviceGet", &api.device_get);
    sym("cuDeviceGetName", &api.device_get_name);
    sym("cuDeviceGetAttribute", &api.device_get_attribute);
    sym("cuGetErrorName", &api.get_error_name);
  });
  return api;
}

std::string ErrorName(const DriverApi& api, CUresult r) {
  const char* name = nullptr;
  if (api.get_error_name != nullptr && api.get_error_name(r, &name) == CUDA_SUCCESS && name) {
    return std::string(name) + " (" + std::to_string(static_cast<int>(r)) + ")";
  }
  return "error " + std::to_string(static_cast<int>(r));
}

}  // namespace

std::string CudaDriverLibrary() {
  const char* env = std::getenv("KILN_LIBCUDA");
  return env != nullptr && *env != '\0' ? env : "libcuda.so.1";
}

CudaDeviceInfo ProbeCudaDevice() {
  const DriverApi& api = Api();
  if (!api.error.empty()) throw CudaUnavailable(api.error);
  CUresult r = api.init(0);
  if (r != CUDA_SUCCESS) {
    throw CudaUnavailable("the CUDA driver (" + CudaDriverLibrary() +
                          ") failed to initialize: cuInit returned " + ErrorName(api, r) +
                          (r == CUDA_ERROR_STUB_LIBRARY
                               ? "; it is the toolkit's stub library, not a real driver"
                               : r == CUDA_ERROR_NO_DEVICE ? "; no NVIDIA GPU is present" : ""));
  }
  CudaDeviceInfo info;
  api.driver_get_version(&info.driver_version);
  if ((r = api.device_get_count(&info.count)) != CUDA_SUCCESS || info.count == 0) {
    throw CudaUnavailable("the CUDA driver sees no GPU" +
                          (r == CUDA_SUCCESS ? std::string() : ": " + ErrorName(api, r)));
  }
  CUdevice dev = 0;
  if ((r = api.device_get(&dev, 0)) != CUDA_SUCCESS) {
    throw CudaUnavailable("cuDeviceGet(0) failed: " + ErrorName(api, r));
  }
  char name[256] = {};
  api.device_get_name(name, sizeof name - 1, dev);
  info.name = name;
  int major = 0, minor = 0;
  api.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  api.device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  info.arch = "sm_" + std::to_string(major * 10 + minor);
  return info;
}

}  // namespace kiln::codegen
