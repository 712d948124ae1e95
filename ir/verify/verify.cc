#include "ir/verify.h"

#include <utility>

#include "ir/verify/verifier.h"

namespace kiln::ir {

namespace {

std::string Describe(const std::string& func_name, const std::vector<VerifyIssue>& issues) {
  std::string s = "function " + func_name + " is not well-formed (" +
                  std::to_string(issues.size()) + " issue(s)):";
  for (const auto& i : issues) s += "\n  " + i.str();
  return s;
}

}  // namespace

std::vector<VerifyIssue> VerifyFunc(const PrimFunc& f) {
  return verify_internal::Verifier(f).Run();
}

VerifyError::VerifyError(const std::string& func_name, std::vector<VerifyIssue> issues)
    : std::runtime_error(Describe(func_name, issues)), issues_(std::move(issues)) {}

void Verify(const PrimFunc& f) {
  std::vector<VerifyIssue> issues = VerifyFunc(f);
  if (!issues.empty()) throw VerifyError(f.name, std::move(issues));
}

}  // namespace kiln::ir
