// The canonical text form of the IR: a subset of TVMScript.
//
// ToText(PrimFunc) is the form files, databases and tests store; parsing it
// back (ir/text/parser.h) gives a structurally identical function, and printing
// that again gives the same text.
//
// Choices that make the form canonical (the parser undoes each one):
// - The root block is elided ("# with T.block(\"root\"):", its allocations
//   at function level) unless it carries something that cannot be elided.
// - Perfectly nested plain serial loops from 0 print as one T.grid.
// - Block iteration variables print as one T.axis.remap when every binding is
//   a loop variable over exactly the iteration domain, else one line each.
// - A block prints, in order: iteration variables, T.where, T.reads,
//   T.writes, T.block_attr, T.alloc_buffer, T.init, body.
// - A range [min, min + extent) prints its stop as the folded constant, as
//   the extent itself when min is 0, or as "min + extent".
// - Names come from the hints, made valid and unique among the names in
//   scope (sibling loops may reuse one) with "_1", "_2", ... suffixes.
#pragma once

#include <string>

#include "ir/expr.h"
#include "ir/prim_func.h"
#include "ir/stmt.h"

namespace kiln::ir {

// The whole file: the "# from tvm.script import tir as T" header, the
// decorator and the function.
std::string ToText(const PrimFunc& f);
// One expression or statement, for messages and debugging. Variables and
// buffers not defined inside are named from their hints.
std::string ToText(const Expr& e);
std::string ToText(const Stmt& s);

// Python's repr() of a double ("0.0", "1e-05", "-3.4028234663852886e+38").
std::string PyFloatRepr(double v);
// A double-quoted Python string literal.
std::string PyStringLiteral(const std::string& s);

}  // namespace kiln::ir
