#include "codegen/cuda/nvrtc_compiler.h"

#include <nvJitLink.h>
#include <nvrtc.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <vector>

#include "codegen/llvm_backend.h"

namespace kiln::codegen {
namespace {

void CheckNvrtc(nvrtcResult r, const char* what) {
  if (r != NVRTC_SUCCESS) {
    throw BuildError(std::string("NVRTC: ") + what + ": " + nvrtcGetErrorString(r));
  }
}

}  // namespace

int SmVersion(const std::string& arch) {
  int v = 0;
  bool ok = arch.size() > 3 && arch.compare(0, 3, "sm_") == 0;
  for (size_t i = 3; ok && i < arch.size(); ++i) {
    if (arch[i] < '0' || arch[i] > '9') {
      ok = false;
    } else {
      v = v * 10 + (arch[i] - '0');
    }
  }
  if (!ok || v < 10 || v > 1000) {
    throw BuildError("CUDA arch \"" + arch + "\" is not of the form sm_XX (e.g. sm_90)");
  }
  return v;
}

std::string NvrtcVersion() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "NVRTC (unknown version)";
  return "NVRTC " + std::to_string(major) + "." + std::to_string(minor);
}

std::string CudaIncludeDir() {
  std::vector<std::string> candidates;
  for (const char* env : {"KILN_CUDA_INCLUDE", "CUDA_HOME", "CUDA_PATH"}) {
    const char* v = std::getenv(env);
    if (v == nullptr || *v == '\0') continue;
    std::string dir = v;
    candidates.push_back(std::string(env) == "KILN_CUDA_INCLUDE" ? dir : dir + "/include");
  }
  candidates.push_back("/usr/local/cuda/include");
  for (const std::string& dir : candidates) {
    if (std::filesystem::exists(dir + "/cuda_fp16.h") && std::filesystem::exists(dir + "/mma.h")) {
      return dir;
    }
  }
  std::string tried;
  for (const std::string& dir : candidates) tried += (tried.empty() ? "" : ", ") + dir;
  throw BuildError("the CUDA toolkit's headers (cuda_fp16.h, mma.h) are needed for half precision "
                   "and tensor cores and were not found in " + tried +
                   "; set KILN_CUDA_INCLUDE to the toolkit's include directory");
}

CudaBinary CompileCuda(const std::string& source, const std::string& arch,
                       const std::string& name) {
  const int sm = SmVersion(arch);
  CudaBinary out;
  out.arch = arch;
  nvrtcProgram prog = nullptr;
  CheckNvrtc(nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr),
             "create program");
  std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> guard(
      &prog, [](nvrtcProgram* p) { nvrtcDestroyProgram(p); });
  const std::string gpu_arch = "--gpu-architecture=compute_" + std::to_string(sm);
  std::vector<const char*> opts = {gpu_arch.c_str(), "--std=c++17"};
  // Half precision and tensor cores need the toolkit's headers (cuda_fp16.h,
  // mma.h), which NVRTC does not carry; plain kernels include nothing.
  std::string include;
  if (source.find("#include <") != std::string::npos) {
    include = "--include-path=" + CudaIncludeDir();
    opts.push_back(include.c_str());
  }
  nvrtcResult r = nvrtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) nvrtcGetProgramLog(prog, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  if (r != NVRTC_SUCCESS) {
    throw BuildError("NVRTC could not compile " + name + " for " + arch + " (" +
                     nvrtcGetErrorString(r) + "):\n" + log);
  }
  out.log = log;
  size_t ptx_size = 0;
  CheckNvrtc(nvrtcGetPTXSize(prog, &ptx_size), "PTX size");
  out.ptx.assign(ptx_size, '\0');
  CheckNvrtc(nvrtcGetPTX(prog, out.ptx.data()), "get PTX");
  while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
  out.cubin = AssemblePtx(out.ptx, arch);
  return out;
}

std::string AssemblePtx(const std::string& ptx, const std::string& arch) {
  SmVersion(arch);
  const std::string a = "-arch=" + arch;
  const char* opts[] = {a.c_str()};
  nvJitLinkHandle h = nullptr;
  if (nvJitLinkCreate(&h, 1, opts) != NVJITLINK_SUCCESS) {
    throw BuildError("nvJitLink: cannot create a linker for " + arch);
  }
  std::unique_ptr<nvJitLinkHandle, void (*)(nvJitLinkHandle*)> guard(
      &h, [](nvJitLinkHandle* p) { nvJitLinkDestroy(p); });
  auto error_log = [&] {
    size_t n = 0;
    std::string log;
    if (nvJitLinkGetErrorLogSize(h, &n) == NVJITLINK_SUCCESS && n > 0) {
      log.assign(n, '\0');
      nvJitLinkGetErrorLog(h, log.data());
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    return log;
  };
  std::string text = ptx;
  if (nvJitLinkAddData(h, NVJITLINK_INPUT_PTX, text.c_str(), text.size() + 1, "kiln.ptx") !=
          NVJITLINK_SUCCESS ||
      nvJitLinkComplete(h) != NVJITLINK_SUCCESS) {
    throw BuildError("nvJitLink (ptxas) rejected the PTX for " + arch + ":\n" + error_log());
  }
  size_t n = 0;
  if (nvJitLinkGetLinkedCubinSize(h, &n) != NVJITLINK_SUCCESS) {
    throw BuildError("nvJitLink: no cubin for " + arch);
  }
  std::string cubin(n, '\0');
  if (nvJitLinkGetLinkedCubin(h, cubin.data()) != NVJITLINK_SUCCESS) {
    throw BuildError("nvJitLink: cannot read the cubin for " + arch);
  }
  return cubin;
}

}  // namespace kiln::codegen
