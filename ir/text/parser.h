// Reads the canonical text form (ir/text/printer.h) and the TVMScript subset TVM
// prints for the same IR.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ir/error.h"
#include "ir/prim_func.h"

namespace kiln::ir {

// Parses text holding exactly one @T.prim_func. Throws ParseError
// ("file:line:col: error: what was expected") on any malformed input; the
// tree is built as written (constants are never folded).
PrimFunc ParseFunc(std::string_view text, const std::string& filename = "<input>");
// Parses every @T.prim_func in the text, in order.
std::vector<PrimFunc> ParseFuncs(std::string_view text, const std::string& filename = "<input>");

// A Python lambda over int32 variables whose body is one expression or a
// tuple of them, as TVM writes an index map: "lambda i, j: (i // 4, j, i % 4)".
struct ParsedLambda {
  std::vector<Var> params;
  std::vector<Expr> body;  // one element unless the body is a tuple
};
ParsedLambda ParseLambda(std::string_view text, const std::string& filename = "<input>");

}  // namespace kiln::ir
