#include "search/tune_context.h"

#include <stdexcept>

#include "search/postproc.h"
#include "search/space_generator.h"
#include "support/cores.h"

namespace kiln::search {

int TuneContext::NumCores() const {
  if (target.num_cores > 0) return target.num_cores;
  return support::HardwareThreads();
}

TuneContext MakeDefaultTuneContext(ir::PrimFunc workload, ir::Target target, int64_t seed,
                                   int num_threads) {
  TuneContext ctx;
  ctx.workload = std::move(workload);
  ctx.target = std::move(target);
  ctx.space_generator = MakeSpaceGenerator("from-target", ctx.target);
  ctx.postprocs = ctx.target.kind == ir::Target::Kind::kCUDA ? DefaultCUDAPostprocs()
                                                             : DefaultLLVMPostprocs();
  ctx.seed = seed;
  ctx.num_threads = num_threads;
  ctx.space_generator->Initialize(ctx);
  for (auto& p : ctx.postprocs) p->Initialize(ctx);
  return ctx;
}

}  // namespace kiln::search
