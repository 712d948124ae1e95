#include "ir/text/same_expr.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "ir/buffer.h"
#include "ir/structural_equal.h"

namespace kiln::ir::text {

bool SameExpr(const Expr &a, const Expr &b) {
  // Structural equality of two expressions compares free variables (and
  // buffers) by identity: exactly "the same expression" here.
  return a.same_as(b) || StructuralEqual(a, b);
}

bool IsReservedName(const std::string &name) {
  static constexpr std::array<std::string_view, 38> kReserved = {
      "False",   "None",     "True",     "and",    "as",    "assert", "async",  "await",
      "break",   "class",    "continue", "def",    "del",   "elif",   "else",   "except",
      "finally", "for",      "from",     "global", "if",    "import", "in",     "is",
      "lambda",  "nonlocal", "not",      "or",     "pass",  "raise",  "return", "try",
      "while",   "with",     "yield",    "T",      "range", "match"};
  return std::find(kReserved.begin(), kReserved.end(), name) != kReserved.end();
}

}  // namespace kiln::ir::text
