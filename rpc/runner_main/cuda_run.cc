#include "rpc/runner_main/cuda_run.h"

#include <memory>
#include <string>

#include "codegen/cuda/cuda_driver.h"
#include "rpc/output_check.h"
#include "rpc/test_fault.h"
#include "rpc/timing.h"

namespace kiln::rpc {
namespace {

using codegen::CudaDevice;
using search::MeasureStatus;

ResultMessage Fail(MeasureStatus status, std::string message) {
  return ResultMessage{status, std::move(message), {}, false};
}

// The device of this process, opened by the first CUDA candidate; nullptr
// with `why` set when there is none.
CudaDevice* Device(std::string* why) {
  static std::unique_ptr<CudaDevice> device;
  static std::string error;
  static bool tried = false;
  if (!tried) {
    tried = true;
    try {
      device = std::make_unique<CudaDevice>();
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  *why = error;
  return device.get();
}

// Everything one candidate holds on the device, freed when it is done (a
// child measures many candidates).
struct DeviceState {
  explicit DeviceState(CudaDevice& d) : dev(d) {}
  DeviceState(const DeviceState&) = delete;
  DeviceState& operator=(const DeviceState&) = delete;
  CudaDevice& dev;
  CudaDevice::Module module = nullptr;
  std::vector<CudaDevice::DevicePtr> buffers;
  CudaDevice::Event start = nullptr, stop = nullptr;
  ~DeviceState() {
    dev.DestroyEvent(start);
    dev.DestroyEvent(stop);
    for (auto p : buffers) dev.Free(p);
    dev.UnloadModule(module);
  }
};

// A buffer larger than the L2 cache, overwritten before each timed run when
// TimingConfig::flush_cache is set, so that no run finds its data in L2.
void FlushL2(CudaDevice& dev) {
  static CudaDevice::DevicePtr buffer = 0;
  static size_t bytes = 0;
  static uint8_t value = 0;
  if (buffer == 0) {
    const int64_t l2 = dev.info().l2_cache_bytes;
    bytes = static_cast<size_t>(l2 > 0 ? l2 * 2 : int64_t{256} << 20);
    buffer = dev.Alloc(bytes);
  }
  dev.Fill(buffer, ++value, bytes);
}

// The argument buffers must be the workload's arguments, in order, then workspace.
std::string CheckBuffers(const CudaCandidateMessage& c, const std::vector<ArgSpec>& args) {
  if (c.buffers.size() < args.size()) {
    return "the program has " + std::to_string(c.buffers.size()) + " buffers for " +
           std::to_string(args.size()) + " arguments";
  }
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    const codegen::CudaBuffer& b = c.buffers[i];
    if (i >= args.size()) {
      if (!b.workspace) return "buffer " + std::to_string(i) + " (" + b.name + ") is no argument";
      if (b.elements <= 0) return "workspace " + b.name + " has no constant size";
      continue;
    }
    int64_t elements = 1;
    for (int64_t e : args[i].shape) elements *= e;
    if (b.workspace || b.dtype != args[i].dtype.str() || b.elements != elements) {
      return "buffer " + std::to_string(i) + " (" + b.name + ": " + b.dtype + " x " +
             std::to_string(b.elements) + ") does not match argument " + args[i].name + " (" +
             args[i].dtype.str() + " x " + std::to_string(elements) + ")";
    }
  }
  return "";
}

}  // namespace

ResultMessage RunCudaCandidate(const CudaCandidateMessage& c, const std::vector<ArgSpec>& args,
                               const std::vector<ir::NDArray>& inputs,
                               const std::vector<ir::NDArray>& expected,
                               const search::TimingConfig& timing) {
  if (std::string bad = CheckBuffers(c, args); !bad.empty()) {
    return Fail(MeasureStatus::kInfraError, "the CUDA launch description is wrong: " + bad);
  }
  std::string why;
  CudaDevice* dev = Device(&why);
  if (dev == nullptr) {
    return Fail(MeasureStatus::kInfraError, "this machine cannot run CUDA kernels: " + why);
  }
  DeviceState st(*dev);
  // 1. The module: the cubin when it is for this device's arch (the cubin of
  // another arch does not load), else the PTX, which the driver compiles.
  std::vector<CudaDevice::Function> functions;
  try {
    const bool cubin_fits = !c.cubin.empty() && c.arch == dev->info().arch;
    if (!cubin_fits && c.ptx.empty()) {
      return Fail(MeasureStatus::kBuildError, "the cubin is for " + c.arch + ", this GPU is " +
                                                  dev->info().arch + ", and no PTX was sent");
    }
    st.module = dev->LoadModule(cubin_fits ? c.cubin : c.ptx);
    for (const codegen::CudaLaunch& l : c.launches) {
      functions.push_back(dev->GetFunction(st.module, l.kernel));
      if (l.dynamic_shared_bytes > 0) dev->SetMaxDynamicShared(functions.back(), l.dynamic_shared_bytes);
    }
  } catch (const std::exception& e) {
    return Fail(MeasureStatus::kBuildError, std::string("the CUDA module does not load: ") + e.what());
  }
  if (!FaultRunsKernel(c.fault)) ExecuteFault(c.fault);
  try {
    // 2. Device buffers: the arguments hold the random inputs, the workspace zeros.
    for (size_t i = 0; i < c.buffers.size(); ++i) {
      const codegen::CudaBuffer& b = c.buffers[i];
      ir::DataType dt;
      ir::DataType::Parse(b.dtype, &dt);  // DecodeCudaCandidate checked it
      const size_t bytes = static_cast<size_t>(b.elements) * static_cast<size_t>(dt.bytes());
      st.buffers.push_back(dev->Alloc(bytes));
      if (i < inputs.size()) {
        dev->CopyToDevice(st.buffers.back(), inputs[i].data(), inputs[i].nbytes());
      } else {
        dev->Fill(st.buffers.back(), 0, bytes);
      }
    }
  } catch (const std::exception& e) {
    return Fail(MeasureStatus::kRunCrash, std::string("cannot set up the device buffers: ") + e.what());
  }
  // cuLaunchKernel takes a pointer to each argument's value; every argument
  // is a device pointer (codegen/cuda/cuda_codegen.cc emits only buffers).
  std::vector<std::vector<CudaDevice::DevicePtr>> values(c.launches.size());
  std::vector<std::vector<void*>> params(c.launches.size());
  for (size_t k = 0; k < c.launches.size(); ++k) {
    for (int a : c.launches[k].args) values[k].push_back(st.buffers[static_cast<size_t>(a)]);
    for (auto& v : values[k]) params[k].push_back(&v);
  }
  auto launch_all = [&] {
    for (size_t k = 0; k < c.launches.size(); ++k) {
      const codegen::CudaLaunch& l = c.launches[k];
      dev->Launch(functions[k], l.grid, l.block, l.dynamic_shared_bytes, params[k].data());
    }
  };
  // 3. One run, then every argument back and compared with the reference.
  std::vector<ir::NDArray> got = inputs;
  try {
    launch_all();
    dev->Synchronize();
    for (size_t i = 0; i < got.size(); ++i) {
      dev->CopyToHost(got[i].data(), st.buffers[i], got[i].nbytes());
    }
  } catch (const std::exception& e) {
    return Fail(MeasureStatus::kRunCrash, std::string("the kernel failed on its first run: ") + e.what());
  }
  if (c.fault == TestFault::kWrongValues && !got.empty() && got.back().size() > 0) {
    got.back().SetFromDouble(0, got.back().GetAsDouble(0) + 1);
  }
  if (c.fault == TestFault::kStrayWrite && !got.empty() && got.front().size() > 0) {
    got.front().SetFromDouble(0, got.front().GetAsDouble(0) + 1);
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (auto diff = CompareOutput(args[i].name, got[i], expected[i])) {
      return Fail(MeasureStatus::kWrongResult, *diff);
    }
  }
  // 4. Timing: CUDA events recorded around `n` runs of the program on the
  // default stream; the L2 flush is enqueued before the start event, so it
  // is not timed.
  std::vector<double> secs;
  try {
    st.start = dev->CreateEvent();
    st.stop = dev->CreateEvent();
    secs = TimeBatches(
        [&](int64_t n) {
          dev->Record(st.start);
          for (int64_t i = 0; i < n; ++i) launch_all();
          dev->Record(st.stop);
          return dev->ElapsedSecs(st.start, st.stop);
        },
        timing, [&] { FlushL2(*dev); });
  } catch (const std::exception& e) {
    return Fail(MeasureStatus::kRunCrash, std::string("the kernel failed while timed: ") + e.what());
  }
  return ResultMessage{MeasureStatus::kOk, "", std::move(secs), true};
}

}  // namespace kiln::rpc
