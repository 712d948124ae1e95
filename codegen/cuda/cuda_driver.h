// The CUDA driver API (libcuda.so.1), loaded with dlopen when first asked for
// and never linked, so that Kiln builds and runs on machines without an
// NVIDIA driver; there every use says so clearly.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace kiln::codegen {

// No usable driver or device; what() says which and why.
class CudaUnavailable : public std::runtime_error {
 public:
  explicit CudaUnavailable(const std::string& msg) : std::runtime_error(msg) {}
};

// A driver call failed; what() names the call and the driver's error.
class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& msg, int code) : std::runtime_error(msg), code_(code) {}
  int code() const { return code_; }  // the CUresult
 private:
  int code_;
};

struct CudaDeviceInfo {
  int count = 0;             // devices the driver sees
  std::string name;          // device 0, "NVIDIA H200"
  std::string arch;          // device 0, "sm_90"
  int driver_version = 0;    // the CUDA version the driver supports, e.g. 13000
  // The kernel module's release ("550.54.15") from /proc/driver/nvidia/version;
  // empty when that file is not there.
  std::string driver_release;
  int64_t l2_cache_bytes = 0;  // device 0
};

// "NVIDIA H200 (sm_90), driver 550.54.15 (CUDA 12.4)": the device part of a
// record's machine fingerprint.
std::string DescribeCudaDevice(const CudaDeviceInfo& info);

// Loads the driver (once per process), initializes it and describes device
// 0. Throws CudaUnavailable when libcuda.so.1 cannot be loaded, cuInit fails
// (a stub library, no device) or no device exists.
CudaDeviceInfo ProbeCudaDevice();

// What the GPU runner's child process (kiln-runner) needs of the driver, on
// the primary context of device 0, which it makes current on the calling
// thread. Every call goes through the dlopen'ed library; a failing call
// throws CudaError naming the call and the error ("cuLaunchKernel:
// CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access ..."). After a
// kernel fault the context is unusable, so the caller ends the process
// rather than measure anything else in it. Handles are the driver's, opaque
// here so that cuda.h stays out of this header.
class CudaDevice {
 public:
  using DevicePtr = uint64_t;
  using Module = void*;
  using Function = void*;
  using Event = void*;

  // Throws CudaUnavailable (as ProbeCudaDevice) or CudaError.
  CudaDevice();
  ~CudaDevice();  // releases the primary context
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  const CudaDeviceInfo& info() const { return info_; }

  DevicePtr Alloc(size_t bytes);  // bytes == 0 allocates one byte
  void Free(DevicePtr p) noexcept;
  void CopyToDevice(DevicePtr dst, const void* src, size_t bytes);
  void CopyToHost(void* dst, DevicePtr src, size_t bytes);
  // Asynchronous on the default stream (cuMemsetD8).
  void Fill(DevicePtr dst, uint8_t value, size_t bytes);

  // A cubin (ELF) or PTX text (the driver compiles it for the device).
  Module LoadModule(const std::string& image);
  void UnloadModule(Module m) noexcept;
  Function GetFunction(Module m, const std::string& name);
  // Allows `bytes` of dynamic shared memory (needed above 48 KiB).
  void SetMaxDynamicShared(Function f, int64_t bytes);
  // cuLaunchKernel on the default stream; params[i] points at argument i.
  void Launch(Function f, const std::array<int64_t, 3>& grid, const std::array<int64_t, 3>& block,
              int64_t dynamic_shared_bytes, void** params);
  void Synchronize();  // cuCtxSynchronize: reports a fault of any launch before it

  Event CreateEvent();
  void DestroyEvent(Event e) noexcept;
  void Record(Event e);  // on the default stream
  // Waits for `stop` and returns the seconds between the two records.
  double ElapsedSecs(Event start, Event stop);

 private:
  CudaDeviceInfo info_;
  int device_ = 0;
  void* context_ = nullptr;
};

// The path the driver is loaded from; "libcuda.so.1" unless the environment
// variable KILN_LIBCUDA names another file (tests point it at the toolkit's
// stub library).
std::string CudaDriverLibrary();

}  // namespace kiln::codegen
