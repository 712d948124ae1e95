// How many hardware threads this machine has: the default for thread counts
// and the core count of the host target.
#pragma once

#include <algorithm>
#include <thread>

namespace kiln::support {

// At least 1 (std::thread::hardware_concurrency may answer 0).
inline int HardwareThreads() {
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace kiln::support
