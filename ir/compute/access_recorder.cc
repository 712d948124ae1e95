#include "ir/compute/access_recorder.h"

namespace kiln::ir::compute {

namespace {
thread_local AccessRecorder* g_current = nullptr;
}  // namespace

AccessRecorder::AccessRecorder() : outer_(g_current) { g_current = this; }

AccessRecorder::~AccessRecorder() { g_current = outer_; }

void AccessRecorder::Note(const Tensor& t) {
  if (g_current == nullptr) return;
  for (const auto& seen : g_current->tensors_) {
    if (seen.same_as(t)) return;
  }
  g_current->tensors_.push_back(t);
}

}  // namespace kiln::ir::compute
