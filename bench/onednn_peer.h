// oneDNN (Debian's libdnnl-dev) as a benchmark peer: its CPU engine and
// stream, its thread count, and weights reordered once into the layout a
// primitive prefers. Only built with KILN_HAVE_DNNL (bench/CMakeLists.txt);
// never a Kiln dependency.
#pragma once

#ifdef KILN_HAVE_DNNL

#include <omp.h>

#include <algorithm>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>
#include <oneapi/dnnl/dnnl_debug.h>

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

  // The layout of a memory descriptor in oneDNN's own notation: logical
  // dims a, b, c, ... from outermost to innermost stride, upper case for a
  // dim split into blocks, then the inner blocks: "Acdb8a" is OIHW weights
  // laid out O/8, H, W, I, 8 O's. Shows whether a primitive packed its
  // weights (the public API of oneDNN 2.6 has no such printer).
  static std::string Layout(const dnnl::memory::desc& md) {
    const dnnl_memory_desc_t& d = md.data;
    if (d.format_kind != dnnl_blocked) return dnnl_fmt_kind2str(d.format_kind);
    const auto& blk = d.format_desc.blocking;
    std::vector<int> order(d.ndims);
    for (int i = 0; i < d.ndims; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return blk.strides[x] > blk.strides[y]; });
    std::string text;
    for (int i : order) {
      bool blocked = false;
      for (int b = 0; b < blk.inner_nblks; ++b) blocked = blocked || blk.inner_idxs[b] == i;
      text += static_cast<char>((blocked ? 'A' : 'a') + i);
    }
    for (int b = 0; b < blk.inner_nblks; ++b) {
      text += std::to_string(blk.inner_blks[b]) + static_cast<char>('a' + blk.inner_idxs[b]);
    }
    return text;
  }

  // "gemm:jit, weights ab (as given)" or "jit:avx2, weights Acdb8a (reordered
  // from cdba)".
  static std::string Describe(const std::string& impl, const dnnl::memory::desc& user_weights,
                              const dnnl::memory::desc& chosen) {
    return impl + ", weights " + Layout(chosen) +
           (user_weights == chosen ? " (as given)" : " (reordered once from " + Layout(user_weights) + ")");
  }

  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

}  // namespace kiln::bench

#endif  // KILN_HAVE_DNNL
