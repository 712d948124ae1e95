// oneDNN (Debian's libdnnl-dev) as a benchmark peer: its CPU engine and
// stream, its thread count, and weights reordered once into the layout a
// primitive prefers. Only built with KILN_HAVE_DNNL (bench/CMakeLists.txt);
// never a Kiln dependency.
#pragma once

#ifdef KILN_HAVE_DNNL

#include <omp.h>

#include <string>

#include <oneapi/dnnl/dnnl.hpp>

namespace kiln::bench {

struct OneDnnPeer {
  // Debian builds oneDNN on OpenMP (DNNL_CPU_RUNTIME OMP): it runs on
  // omp_get_max_threads() threads, read when a primitive is created and run.
  explicit OneDnnPeer(int threads) {
    omp_set_num_threads(threads);
  }

  // A copy of `user` in `wanted` (the primitive's weights_desc() when the
  // weights were created with format_tag::any), reordered now: the weights
  // of an inference layer are constant, so the packing is not timed.
  dnnl::memory Prepacked(dnnl::memory& user, const dnnl::memory::desc& wanted) {
    if (user.get_desc() == wanted) return user;
    dnnl::memory packed(wanted, engine);
    dnnl::reorder(user, packed).execute(stream, user, packed);
    stream.wait();
    return packed;
  }

  // "gemm:jit (weights reordered to its layout)" or "... (weights in the user layout)".
  static std::string Describe(const std::string& impl, const dnnl::memory::desc& user_weights,
                              const dnnl::memory::desc& chosen) {
    return impl + (user_weights == chosen ? " (weights in the user layout)" : " (weights reordered to its layout)");
  }

  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

}  // namespace kiln::bench

#endif  // KILN_HAVE_DNNL
