// Target: the machine a kernel is compiled for, as pure data.
//
// Parsed from TVM-style strings ("llvm -mcpu=skylake-avx512 -num-cores=2",
// "cuda -arch=sm_90") and normalized, so that two spellings of one target
// compare equal and print the same: options are printed in sorted key order,
// -mattr features are sorted and deduplicated (a later "-f" wins over "+f").
// "host" is not resolved here (that needs LLVM): codegen/host.h does it.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::ir {

// A target string that does not parse; what() names the option at fault.
class TargetError : public std::runtime_error {
 public:
  explicit TargetError(const std::string& msg) : std::runtime_error(msg) {}
};

struct Target {
  enum class Kind { kLLVM, kCUDA };
  Kind kind = Kind::kLLVM;
  // LLVM options. Empty mcpu / mtriple mean "LLVM's default for the host".
  std::string mcpu;
  std::string mtriple;
  std::vector<std::string> mattr;  // normalized: sorted by name, "+avx2" / "-avx512f"
  int num_cores = 0;               // 0: not given (the runtime uses every core)
  // CUDA options.
  std::string arch;                // "sm_90"
  int max_threads_per_block = 0;   // 0: not given (1024 assumed)
  int max_shared_memory_per_block = 0;  // bytes; 0: not given (49152 assumed)
  int thread_warp_size = 0;        // 0: not given (32 assumed)

  // Throws TargetError naming the offending option.
  static Target Parse(std::string_view text);

  std::string KindName() const;   // "llvm" / "cuda"
  std::string ToString() const;   // the canonical form; Parse(ToString()) == *this
  // "avx512f" listed with '+' in -mattr. What -mcpu implies is not known
  // here: codegen::TargetHasFeature (codegen/target_features.h) knows it.
  bool HasFeature(std::string_view feature) const;
  int WarpSize() const { return thread_warp_size > 0 ? thread_warp_size : 32; }
  int MaxThreadsPerBlock() const { return max_threads_per_block > 0 ? max_threads_per_block : 1024; }
  int MaxSharedMemoryPerBlock() const {
    return max_shared_memory_per_block > 0 ? max_shared_memory_per_block : 49152;
  }

  friend bool operator==(const Target& a, const Target& b) { return a.ToString() == b.ToString(); }
};

}  // namespace kiln::ir
