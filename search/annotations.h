// Annotation keys through which rules hand work to postprocessors, spelled as
// TVM spells them so that traces and scheduled programs read the same.
#pragma once

namespace kiln::search::ann {

// Block: the structure MultiLevelTiling tiled it with ("SSRSRS"); later rules
// take the block as already tiled.
inline constexpr char kTilingStructure[] = "meta_schedule.tiling_structure";
// Root block: the parallel extent limit, the vectorize extent limit and the
// sampled unroll step (RewriteParallelVectorizeUnroll consumes them).
inline constexpr char kParallel[] = "meta_schedule.parallel";
inline constexpr char kVectorize[] = "meta_schedule.vectorize";
inline constexpr char kUnrollExplicit[] = "meta_schedule.unroll_explicit";
inline constexpr char kUnrollImplicit[] = "meta_schedule.unroll_implicit";
// Block: its rfactor producer wants a random compute location too.
inline constexpr char kRandomComputeProducer[] = "meta_schedule.random_compute_producer";
// Block: AutoInline leaves it alone when the value is "disable".
inline constexpr char kInlineRule[] = "meta_schedule.inline_rule";
// Block: forces MultiLevelTiling's write reuse to "must" at these levels.
inline constexpr char kWriteCacheLevel[] = "meta_schedule.write_cache_level";
// Block: a user schedule owns it; every rule skips it.
inline constexpr char kScheduleRule[] = "schedule_rule";
// Block (GPU): the range of threads per block MultiLevelTiling wants;
// VerifyGPUCode rejects candidates outside it.
inline constexpr char kThreadExtentLow[] = "meta_schedule.thread_extent_low_inclusive";
inline constexpr char kThreadExtentHigh[] = "meta_schedule.thread_extent_high_inclusive";
// Cache-read block (GPU): fetch it with all threads of the block, `value`
// elements per thread at a time (RewriteCooperativeFetch).
inline constexpr char kCooperativeFetch[] = "meta_schedule.cooperative_fetch";
// On a block whose statements a whole warp runs together (tensor cores):
// the cooperative fetches then use the warp's lanes as threadIdx.x
// (MultiLevelTilingTensorCore sets it, RewriteCooperativeFetch reads it).
inline constexpr char kWarpExecution[] = "warp_execution";
// Loop: what RewriteParallelVectorizeUnroll leaves for the unroller.
inline constexpr char kPragmaAutoUnrollMaxStep[] = "pragma_auto_unroll_max_step";
inline constexpr char kPragmaUnrollExplicit[] = "pragma_unroll_explicit";

}  // namespace kiln::search::ann
