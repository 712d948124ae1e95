// The canonical text form of the IR: a subset of TVMScript.
//
// ToText(PrimFunc) is the form files, databases and tests store; parsing it
// back (ir/parser.h) gives a structurally identical function, and printing
// that again gives the same text.
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
