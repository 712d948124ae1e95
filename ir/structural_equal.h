// Structural (alpha-)equality of IR: are two programs the same up to renaming?
//
// Names of variables and buffers do not matter; where they are defined does.
// Variables are matched at their definition sites (loop variables, block
// iteration variables) and buffers at theirs (function parameters by position,
// block alloc_buffers by position), and every use must refer to the
// counterpart's definition. Definitions are lexically scoped: a loop variable
// is bound only in its loop's body, an iteration variable or allocated buffer
// only inside its block.
//
// Everything else matters: data types, constants (integers exactly; floats by
// bit pattern, except that all NaNs are one value, so -0.0 != 0.0), loop kinds,
// thread tags, annotations, iteration types and domains, bindings,
// predicates, regions, init statements, allocated buffers (dtype, shape,
// strides, scope, alignment), block names and statement order. A function's
// own name is ignored; its attributes are not.
//
// Consistent with StructuralHash (ir/structural_hash.h): equal implies equal
// hashes.
#pragma once

#include <optional>
#include <string>

#include "ir/expr.h"
#include "ir/prim_func.h"
#include "ir/stmt.h"

namespace kiln::ir {

// Variables and buffers that are not defined inside the function (symbolic
// shape variables of the parameters, say) are matched at their first use:
// the function is closed, so their names are as irrelevant as any other.
bool StructuralEqual(const PrimFunc& a, const PrimFunc& b);

// Free variables (and buffers) of a fragment belong to some enclosing scope
// that the fragment cannot see, so they are compared by identity; variables and
// buffers defined inside the fragment are matched as for functions.
bool StructuralEqual(const Expr& a, const Expr& b);
bool StructuralEqual(const Stmt& a, const Stmt& b);

// Empty when equal; otherwise the first difference in traversal order, as
// "<path>: <what differs>", e.g.
//   "body/block 'root'/body/for i/body/block 'C'/body/store C/value: expression kind: Add vs Mul"
// Names in the path are those of `a`.
std::optional<std::string> StructuralMismatch(const PrimFunc& a, const PrimFunc& b);
std::optional<std::string> StructuralMismatch(const Expr& a, const Expr& b);
std::optional<std::string> StructuralMismatch(const Stmt& a, const Stmt& b);

}  // namespace kiln::ir
