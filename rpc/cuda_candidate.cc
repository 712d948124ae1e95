#include "rpc/cuda_candidate.h"

#include "codegen/cuda/cuda_codegen.h"
#include "codegen/cuda/nvrtc_compiler.h"
#include "codegen/llvm_backend.h"

namespace kiln::rpc {

CudaCandidateMessage BuildCudaCandidate(const ir::PrimFunc& scheduled, const ir::Target& target) {
  codegen::CudaModule m = codegen::BuildCudaSource(scheduled, target);
  codegen::CudaBinary bin = codegen::CompileCuda(m.source, target.arch, scheduled.name + ".cu");
  CudaCandidateMessage c;
  c.arch = bin.arch;
  c.cubin = std::move(bin.cubin);
  c.ptx = std::move(bin.ptx);
  c.buffers = std::move(m.buffers);
  c.launches = std::move(m.launches);
  return c;
}

ir::Target ReferenceTargetFor(const ir::Target& target) {
  return target.kind == ir::Target::Kind::kCUDA ? codegen::HostTarget() : target;
}

}  // namespace kiln::rpc
