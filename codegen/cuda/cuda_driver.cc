#include "codegen/cuda/cuda_driver.h"

#include <cuda.h>
#include <dlfcn.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

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
  // What CudaDevice needs. Each is looked up by the name cuda.h's macros map
  // the plain name to (cuMemAlloc -> cuMemAlloc_v2), exactly the symbol a
  // program linked against libcuda with this header would call, and has that
  // declaration's type.
#define KILN_CU_ENTRY(fn) decltype(&::fn) fn = nullptr;
#define KILN_CU_ENTRIES(X)                                                                  \
  X(cuGetErrorString) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)             \
  X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD)        \
  X(cuMemcpyDtoH) X(cuMemsetD8) X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) \
  X(cuFuncSetAttribute) X(cuLaunchKernel) X(cuEventCreate) X(cuEventDestroy)              \
  X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime)
  KILN_CU_ENTRIES(KILN_CU_ENTRY)
#undef KILN_CU_ENTRY
};

#define KILN_CU_STR2(x) #x
#define KILN_CU_STR(x) KILN_CU_STR2(x)

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
      // cuEventElapsedTime_v2 (CUDA 12.8) has v1's signature; a driver older
      // than the toolkit's header has only v1.
      if (p == nullptr && std::string(name) == "cuEventElapsedTime_v2") {
        p = dlsym(api.handle, "cuEventElapsedTime");
      }
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
#define KILN_CU_LOOKUP(fn) sym(KILN_CU_STR(fn), &api.fn);
    KILN_CU_ENTRIES(KILN_CU_LOOKUP)
#undef KILN_CU_LOOKUP
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

// "CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered"
std::string ErrorText(const DriverApi& api, CUresult r) {
  std::string text = ErrorName(api, r);
  const char* desc = nullptr;
  if (api.cuGetErrorString != nullptr && api.cuGetErrorString(r, &desc) == CUDA_SUCCESS && desc) {
    text += std::string(": ") + desc;
  }
  return text;
}

void Check(CUresult r, const char* call) {
  if (r != CUDA_SUCCESS) throw CudaError(std::string(call) + ": " + ErrorText(Api(), r), r);
}

// The loaded kernel module's release line, e.g. "NVRM version: NVIDIA UNIX
// x86_64 Kernel Module  550.54.15  Tue Mar  5 ..." -> "550.54.15".
std::string DriverRelease() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(in, line)) return "";
  const std::string marker = "Kernel Module";
  size_t at = line.find(marker);
  if (at == std::string::npos) return "";
  std::istringstream rest(line.substr(at + marker.size()));
  std::string release;
  rest >> release;
  return release;
}

}  // namespace

std::string DescribeCudaDevice(const CudaDeviceInfo& info) {
  const int v = info.driver_version;
  std::string cuda = "CUDA " + std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
  return info.name + " (" + info.arch + "), driver " +
         (info.driver_release.empty() ? cuda : info.driver_release + " (" + cuda + ")");
}

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
  int l2 = 0;
  api.device_get_attribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
  info.l2_cache_bytes = l2;
  info.driver_release = DriverRelease();
  return info;
}

CudaDevice::CudaDevice() : info_(ProbeCudaDevice()) {
  const DriverApi& api = Api();
  CUdevice dev = 0;
  Check(api.device_get(&dev, 0), "cuDeviceGet");
  device_ = dev;
  CUcontext ctx = nullptr;
  Check(api.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  context_ = ctx;
  CUresult r = api.cuCtxSetCurrent(ctx);
  if (r != CUDA_SUCCESS) {
    api.cuDevicePrimaryCtxRelease(dev);
    Check(r, "cuCtxSetCurrent");
  }
}

CudaDevice::~CudaDevice() {
  if (context_ != nullptr) Api().cuDevicePrimaryCtxRelease(device_);
}

CudaDevice::DevicePtr CudaDevice::Alloc(size_t bytes) {
  CUdeviceptr p = 0;
  Check(Api().cuMemAlloc(&p, bytes == 0 ? 1 : bytes), "cuMemAlloc");
  return p;
}

void CudaDevice::Free(DevicePtr p) noexcept {
  if (p != 0) Api().cuMemFree(static_cast<CUdeviceptr>(p));
}

void CudaDevice::CopyToDevice(DevicePtr dst, const void* src, size_t bytes) {
  if (bytes > 0) Check(Api().cuMemcpyHtoD(static_cast<CUdeviceptr>(dst), src, bytes), "cuMemcpyHtoD");
}

void CudaDevice::CopyToHost(void* dst, DevicePtr src, size_t bytes) {
  if (bytes > 0) Check(Api().cuMemcpyDtoH(dst, static_cast<CUdeviceptr>(src), bytes), "cuMemcpyDtoH");
}

void CudaDevice::Fill(DevicePtr dst, uint8_t value, size_t bytes) {
  if (bytes > 0) Check(Api().cuMemsetD8(static_cast<CUdeviceptr>(dst), value, bytes), "cuMemsetD8");
}

CudaDevice::Module CudaDevice::LoadModule(const std::string& image) {
  CUmodule m = nullptr;
  // The driver reads PTX up to its NUL; std::string keeps one after the data.
  Check(Api().cuModuleLoadData(&m, image.c_str()), "cuModuleLoadData");
  return m;
}

void CudaDevice::UnloadModule(Module m) noexcept {
  if (m != nullptr) Api().cuModuleUnload(static_cast<CUmodule>(m));
}

CudaDevice::Function CudaDevice::GetFunction(Module m, const std::string& name) {
  CUfunction f = nullptr;
  CUresult r = Api().cuModuleGetFunction(&f, static_cast<CUmodule>(m), name.c_str());
  if (r != CUDA_SUCCESS) {
    throw CudaError("cuModuleGetFunction(\"" + name + "\"): " + ErrorText(Api(), r), r);
  }
  return f;
}

void CudaDevice::SetMaxDynamicShared(Function f, int64_t bytes) {
  Check(Api().cuFuncSetAttribute(static_cast<CUfunction>(f),
                                 CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                 static_cast<int>(bytes)),
        "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
}

void CudaDevice::Launch(Function f, const std::array<int64_t, 3>& grid,
                        const std::array<int64_t, 3>& block, int64_t dynamic_shared_bytes,
                        void** params) {
  auto dim = [](int64_t v) { return static_cast<unsigned>(v); };
  Check(Api().cuLaunchKernel(static_cast<CUfunction>(f), dim(grid[0]), dim(grid[1]), dim(grid[2]),
                             dim(block[0]), dim(block[1]), dim(block[2]),
                             dim(dynamic_shared_bytes), nullptr, params, nullptr),
        "cuLaunchKernel");
}

void CudaDevice::Synchronize() { Check(Api().cuCtxSynchronize(), "cuCtxSynchronize"); }

CudaDevice::Event CudaDevice::CreateEvent() {
  CUevent e = nullptr;
  Check(Api().cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
  return e;
}

void CudaDevice::DestroyEvent(Event e) noexcept {
  if (e != nullptr) Api().cuEventDestroy(static_cast<CUevent>(e));
}

void CudaDevice::Record(Event e) {
  Check(Api().cuEventRecord(static_cast<CUevent>(e), nullptr), "cuEventRecord");
}

double CudaDevice::ElapsedSecs(Event start, Event stop) {
  Check(Api().cuEventSynchronize(static_cast<CUevent>(stop)), "cuEventSynchronize");
  float ms = 0;
  Check(Api().cuEventElapsedTime(&ms, static_cast<CUevent>(start), static_cast<CUevent>(stop)),
        "cuEventElapsedTime");
  return static_cast<double>(ms) / 1000.0;
}

}  // namespace kiln::codegen
