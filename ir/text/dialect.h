// The two TVMScript dialects TVM prints. Until 0.2x TVM wrote `tir` names
// (`T.block`, `T.alloc_buffer`, `T.block_attr`, attribute keys "tir.*");
// apache-tvm 0.27 writes `tirx` ones (`T.sblock`, `T.sblock_alloc_buffer`,
// `T.sblock_attr`, "tirx.*", `@T.prim_func(s_tir=True)`). The parser reads
// both by mapping the newer spellings onto the older ones, which are Kiln's
// canonical text (ir/text/printer.h), so that a function means the same and
// hashes the same whichever TVM printed it.
#pragma once

#include <string>

namespace kiln::ir::text {

// The canonical name of a dotted `T.` name: "sblock_alloc_buffer" ->
// "alloc_buffer"; names without a second spelling come back as they are.
std::string CanonicalTName(const std::string& name);

// The canonical key of a function or block attribute: "tirx.noalias" ->
// "tir.noalias".
std::string CanonicalAttrKey(const std::string& key);

// Keyword arguments of @T.prim_func(...) that Kiln accepts and ignores:
// `private`, `check_well_formed` and 0.27's `s_tir` (the function holds
// SBlocks, which is all Kiln has).
bool IsKnownPrimFuncFlag(const std::string& name);

}  // namespace kiln::ir::text
