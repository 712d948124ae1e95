// A stable structural hash of IR, consistent with StructuralEqual.
//
// The hash is xxHash64 (seed 0) of a canonical byte stream documented at the
// top of structural_hash.cc. It does not depend on pointers, names of
// variables or buffers, the build or the platform, so it can key a database:
// any change to the stream changes stored keys and is a format change.
//
// Equal programs (StructuralEqual) hash equal; unequal ones almost always
// differ, but callers that need certainty confirm with StructuralEqual.
#pragma once

#include <cstdint>
#include <string>

#include "ir/expr.h"
#include "ir/prim_func.h"
#include "ir/stmt.h"

namespace kiln::ir {

uint64_t StructuralHash(const PrimFunc& f);
// Free variables and buffers of a fragment hash by the order of their first
// use, so fragments that differ only in which free variables they use (x + 1
// vs y + 1) hash equal while comparing unequal.
uint64_t StructuralHash(const Expr& e);
uint64_t StructuralHash(const Stmt& s);

// The function's hash as 16 lowercase hexadecimal digits (zero padded).
std::string StructuralHashHex(const PrimFunc& f);
std::string StructuralHashHex(uint64_t hash);

}  // namespace kiln::ir
