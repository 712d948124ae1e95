#include "ir/schedule/define_kind.h"

#include <cctype>
#include <utility>

namespace kiln::ir::kind_definition {

PyCall& PyCall::Arg(const std::string& name, const std::string& value) {
  return Positional(name + "=" + value);
}

PyCall& PyCall::Positional(const std::string& value) {
  if (!args_.empty()) args_ += ", ";
  args_ += value;
  return *this;
}

std::string PyCall::Line() const { return PyAssign(out) + "sch." + method_ + "(" + args_ + ")"; }

std::string PythonMethod(const std::string& kind) {
  std::string s;
  for (size_t i = 0; i < kind.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(kind[i]);
    if (std::isupper(c) && i > 0 && std::islower(static_cast<unsigned char>(kind[i - 1]))) s += '_';
    s += static_cast<char>(std::tolower(c));
  }
  return s;
}

InstructionKind DefineKind(const std::string& name, KindTraits traits, ApplyFn apply,
                           PythonFn python, CheckFn check) {
  InstructionKind k;
  k.name = name;
  k.is_pure = traits.is_pure;
  k.has_decision = traits.has_decision;
  // The lambdas capture the name by value: the kind outlives this call.
  k.apply = [name, apply = std::move(apply)](Schedule& sch, const std::vector<InstArg>& in,
                                             const nlohmann::json& attrs,
                                             const nlohmann::json* decision) {
    return apply(sch, Args(name, in, attrs, decision));
  };
  k.as_python = [name, method = PythonMethod(name), python = std::move(python)](
                    const std::vector<std::string>& in, const std::vector<std::string>& out,
                    const nlohmann::json& attrs, const nlohmann::json* decision) {
    PyCall call(name, method, in, out, attrs, decision);
    python(call);
    return call.Line();
  };
  k.check = std::move(check);
  return k;
}

}  // namespace kiln::ir::kind_definition
