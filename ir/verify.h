// The well-formedness checker for PrimFuncs.
//
// Nodes can be built directly, bypassing the checks in op.h, and schedules
// and parsers can produce IR that type-checks node by node but is wrong as a
// whole (a variable out of scope, a block reading outside its T.reads). The
// verifier finds those problems and says, in words, where and what is wrong.
// It never crashes on malformed input: null nodes are reported as issues.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "ir/prim_func.h"

namespace kiln::ir {

struct VerifyIssue {
  // "function main", "block 'C'", "loop i_0 in block 'root'".
  std::string where;
  std::string message;

  std::string str() const { return where + ": " + message; }
};

// All issues found in f, in traversal order; empty when f is well-formed.
std::vector<VerifyIssue> VerifyFunc(const PrimFunc& f);

// Thrown by Verify. what() is a header line followed by one issue per line.
class VerifyError : public std::runtime_error {
 public:
  VerifyError(const std::string& func_name, std::vector<VerifyIssue> issues);
  const std::vector<VerifyIssue>& issues() const { return issues_; }

 private:
  std::vector<VerifyIssue> issues_;
};

// Throws VerifyError if f has any issue.
void Verify(const PrimFunc& f);

}  // namespace kiln::ir
