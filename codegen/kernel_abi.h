// The calling convention of every CPU kernel Kiln emits, and of the runtime
// functions generated code calls. Plain C so that `kiln compile` users and
// the runner can call a kernel without any Kiln headers but this one.
#ifndef KILN_CODEGEN_KERNEL_ABI_H_
#define KILN_CODEGEN_KERNEL_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// A kernel: `int32_t <symbol>(void* const* args)`. args[i] points to the
// contiguous, row-major data of the function's i-th parameter, aligned to at
// least 64 bytes. Returns 0 on success, non-zero if the kernel failed (for
// example an allocation it needed).
typedef int32_t (*kiln_kernel_fn)(void* const* args);

// One task of a parallel loop: runs iterations [begin, end) with the
// captured variables in `closure`. Returns 0 on success.
typedef int32_t (*kiln_parallel_body_fn)(int64_t begin, int64_t end, void* closure);

// Provided by the Kiln runtime (codegen/runtime): splits [0, n) into chunks
// over the runtime's thread pool and waits for all of them. Returns the first
// non-zero body result, or 0.
int32_t kiln_parallel_for(int64_t n, kiln_parallel_body_fn body, void* closure);

// Sets the number of threads kiln_parallel_for uses (0: every core). Threads
// are created lazily, so a process that never runs a parallel loop has none.
// Between parallel loops the threads poll for the next one for 200
// microseconds before they sleep; the environment variable
// KILN_RUNTIME_POLL_US, read once, sets that time (0: sleep at once, as
// OMP_WAIT_POLICY=passive does for OpenMP).
void kiln_runtime_set_num_threads(int32_t n);

#ifdef __cplusplus
}
#endif

#endif  // KILN_CODEGEN_KERNEL_ABI_H_
