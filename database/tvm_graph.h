// Reading TVM's serialized IRModule (the tvm-ffi JSON node graph that
// `tvm.ir.save_json` writes and MetaSchedule's workload file stores) into
// Kiln's IR. The graph is {"root_index": i, "nodes": [{"type": T, "data": D}]}
// where object fields hold the index of another node and plain numbers
// (loop kinds, iteration types, alignments) are inline.
//
// Only the subset Kiln's IR holds converts: one PrimFunc of SBlocks, loops,
// stores, loads and arithmetic. Any other node kind is an error naming it and
// its node index, never a partial program.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>

#include "ir/prim_func.h"

namespace kiln::database {

class TvmImportError : public std::runtime_error {
 public:
  explicit TvmImportError(const std::string& msg) : std::runtime_error(msg) {}
};

// The module's single PrimFunc. Throws TvmImportError for a malformed graph,
// a module without exactly one PrimFunc, or a node Kiln cannot represent.
// Attribute keys are read in Kiln's spelling ("tirx.noalias" ->
// "tir.noalias"); TVM's bookkeeping attributes ("global_symbol", "s_tir") are
// dropped, so a workload hashes as Kiln's own copy of it does.
ir::PrimFunc PrimFuncFromTvmGraph(const nlohmann::json& graph);

// A MetaSchedule workload blob: base64 of either the JSON text (TVM up to
// 0.2x) or an 8-byte little-endian length followed by it (0.27). Returns the
// JSON text; throws TvmImportError when it is neither.
std::string DecodeTvmWorkloadBlob(const std::string& base64);

}  // namespace kiln::database
