// Shared analysis for schedule primitives: block kinds, binding properties,
// producer/consumer relations inside a scope, region cover, stage pipelines
// and loop chains (TVM's schedule/analysis and SBlockInfo).
//
// Every predicate that can fail takes an optional `why`; on failure it is set
// to a sentence naming the block or loop and the rule broken, ready to be
// used in a ScheduleError message.
//
// A block's "scope" is the innermost block above it; "the blocks in a scope"
// are its child blocks (ChildBlockRealizes), not blocks nested deeper.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/prim_func.h"
#include "ir/schedule/stmt_path.h"
#include "ir/stmt.h"

namespace kiln::ir {

// ---- Scopes -----------------------------------------------------------------

// The path from the root to the scope block of path.back() (the innermost
// BlockRealize strictly above it); empty when path.back() is the root.
StmtPath ScopePathOf(const StmtPath& path);
// The scope BlockRealize of path.back(), or nullptr for the root block.
const BlockRealizeNode* ScopeBlockOf(const StmtPath& path);

// The child blocks of a scope (a BlockRealize, or a loop: the blocks under it
// up to the first block level), in program order.
std::vector<const BlockRealizeNode*> BlocksInScope(const Stmt& scope);
// For each child block of `scope`, the path from `scope` (inclusive) to it.
std::vector<StmtPath> BlockPathsInScope(const Stmt& scope);

// Child blocks of `scope` that write / read `buffer`, in program order.
std::vector<const BlockRealizeNode*> WritersOf(const Stmt& scope, const BufferNode* buffer);
std::vector<const BlockRealizeNode*> ReadersOf(const Stmt& scope, const BufferNode* buffer);
// Child blocks of `scope` other than `block` that write a buffer `block`
// reads (its producers) / read a buffer `block` writes (its consumers).
// Unlike Schedule::GetProducers these do not look at program order.
std::vector<const BlockRealizeNode*> ProducersOf(const Stmt& scope, const BlockNode* block);
std::vector<const BlockRealizeNode*> ConsumersOf(const Stmt& scope, const BlockNode* block);

// True if `block` writes a buffer that `scope` (a BlockRealize) does not
// allocate: a function parameter or a buffer of an outer scope.
bool IsOutputBlock(const Stmt& scope, const BlockNode* block);

// ---- Bindings -----------------------------------------------------------------

// The loops between path.back() and its scope block, outer to inner, with
// their ranges: the iteration domain of a block's bindings.
std::vector<std::pair<Var, Range>> LoopDomainOf(const StmtPath& path);

// The block's iter_values are an affine map of the loops between it and its
// scope (DetectIterMap, surjective, under the block predicate). A block
// without iter vars is affine.
bool IsAffineBinding(const StmtPath& block_path, std::string* why = nullptr);
// Each iter value is exactly one enclosing loop variable, in loop order, with
// one loop per iter var (what T.axis.remap over T.grid produces).
bool IsTrivialBinding(const StmtPath& block_path, std::string* why = nullptr);

// ---- Block kinds --------------------------------------------------------------

// Every iter var is data-parallel.
bool IsDataParallelBlock(const BlockNode& block, std::string* why = nullptr);
// The block is the only child block of `scope` writing each buffer it writes.
bool IsDominantBlock(const Stmt& scope, const BlockNode& block, std::string* why = nullptr);
// Data-parallel, no init, dominant writer, and it reads none of the buffers
// it writes.
bool IsCompleteBlock(const StmtPath& block_path, std::string* why = nullptr);
// Has an init, affine binding, only data-parallel and reduction iter vars,
// dominant writer, and no reduction iter var indexes a written buffer.
// binding_known_affine skips the binding check for a caller that has just
// made it (IsAffineBinding succeeded on this very path).
bool IsReductionBlock(const StmtPath& block_path, std::string* why = nullptr,
                      bool binding_known_affine = false);

// ---- Dataflow in a scope -------------------------------------------------------

// For each buffer the consumer (a child block of the scope at scope_path)
// reads, the regions its producers in the scope write cover the region it
// reads, both taken over the loops below their lowest common ancestor
// (TVM's region_cover; producers by lower bound, consumer by upper bound).
// With `within` (a statement of the scope, e.g. a loop), only producers
// under `within` count: the check that the data flow under a loop is
// self-contained in each of its iterations. `scope_block_paths`, if given,
// is BlockPathsInScope(scope_path.back()), for callers that ask about
// several consumers of one scope.
bool IsRegionCovered(const StmtPath& scope_path, const BlockRealizeNode* consumer,
                     std::string* why = nullptr, const StmtNode* within = nullptr,
                     const std::vector<StmtPath>* scope_block_paths = nullptr);
// Every child block of the scope has its read regions covered by its
// producers (TVM's stage_pipeline: there are no write-after-read or opaque
// dependencies in this IR, so region cover is the whole condition).
bool IsStagePipeline(const StmtPath& scope_path, std::string* why = nullptr);

// ---- Loop chains ------------------------------------------------------------------

// The loops (outer to inner) are perfectly nested: each one's body is exactly
// the next loop.
bool IsPerfectlyNested(const std::vector<const ForNode*>& loops, std::string* why = nullptr);
// Below `s` there is one single-branch chain: loops whose bodies are single
// statements, ending at one block or leaf statement (no SeqStmt or if).
bool IsSingleChain(const Stmt& s, std::string* why = nullptr);
// True if `outer` is a strict ancestor of the loop at the end of inner_path.
bool IsAncestorLoop(const ForNode* outer, const StmtPath& inner_path);

// ---- Rewriting ------------------------------------------------------------------

// Simplifies the iter_values of every block under `s` as loop primitives do
// after substituting loop variables: bindings that form an affine map of
// their scope's loops take its normal form (TVM's IterMapSimplify), others
// are simplified with arith. Both sides of the comparisons in block
// predicates are simplified alike. `outer_loops` are the loops between `s`
// and its scope block (LoopDomainOf(path to s)). Unless preserve_unit_iters,
// loops of extent 1 are replaced by their minimum in the bindings first.
// `affine_blocks`, if given, receives the names of the blocks whose
// bindings the iteration map proved affine on the way (what IsAffineBinding
// would answer true for), so that the primitive can note the fact
// (schedule_fact.h) instead of a later check proving it again.
Stmt SimplifyBlockBindings(const Stmt& s, const std::vector<std::pair<Var, Range>>& outer_loops,
                           bool preserve_unit_iters,
                           std::vector<std::string>* affine_blocks = nullptr);
// Every loop enclosing path.back() (all scopes, outer to inner, the last
// statement excluded), with ranges: the context for simplification.
std::vector<std::pair<Var, Range>> AllLoopsAbove(const StmtPath& path);

}  // namespace kiln::ir
