// CPU seconds of the calling thread: what a build or a timed run on one
// thread costs, without the waits for a core that its wall time includes on
// a shared machine.
#pragma once

#include <time.h>

namespace kiln::support {

// 0 when the clock cannot be read.
inline double ThreadCpuSeconds() {
  timespec ts{};
  if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace kiln::support
