// Records which tensors a compute function reads while it runs.
//
// Tensor::operator() yields a plain BufferLoad, which does not say which
// Tensor it came from; compute() needs the Tensors to build the stage graph.
// An AccessRecorder is active (per thread) while one compute function runs.
#pragma once

#include <vector>

#include "ir/compute/tensor.h"

namespace kiln::ir::compute {

class AccessRecorder {
 public:
  AccessRecorder();
  ~AccessRecorder();
  AccessRecorder(const AccessRecorder&) = delete;
  AccessRecorder& operator=(const AccessRecorder&) = delete;

  const std::vector<Tensor>& tensors() const { return tensors_; }

  // Notes an access on the innermost active recorder, if any.
  static void Note(const Tensor& t);

 private:
  std::vector<Tensor> tensors_;
  AccessRecorder* outer_;
};

}  // namespace kiln::ir::compute
