// Declaring an instruction kind with its name written once: DefineKind takes
// the name, the kind's traits, an apply function that reads the instruction
// through Args and a builder that adds the arguments of its Python call line
// to a PyCall. Every error Args raises, and the Python method the line calls
// (the name in snake_case: CacheRead -> sch.cache_read), come from that one
// name. The primitives (ir/schedule/primitive/*.cc) declare their kinds so.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ir/schedule/inst_args.h"
#include "ir/schedule/instruction.h"
#include "ir/schedule/schedule.h"

namespace kiln::ir::kind_definition {

// One instruction as its kind's apply function reads it (the readers of
// inst_args.h with the kind's name bound).
class Args {
 public:
  Args(const std::string& kind, const std::vector<InstArg>& inputs, const nlohmann::json& attrs,
       const nlohmann::json* decision)
      : kind_(kind), inputs_(inputs), attrs_(attrs), decision_(decision) {}

  const std::string& kind() const { return kind_; }
  const std::vector<InstArg>& inputs() const { return inputs_; }
  size_t size() const { return inputs_.size(); }
  const nlohmann::json& attrs() const { return attrs_; }
  // The recorded decision; null when the kind samples afresh.
  const nlohmann::json* decision() const { return decision_; }

  // Throws TraceError "<kind>: <what>".
  [[noreturn]] void Fail(const std::string& what) const { kind_definition::Fail(kind_, what); }
  void ExpectInputs(size_t n) const { kind_definition::ExpectInputs(kind_, inputs_, n); }
  void ExpectAttrs(size_t n) const { kind_definition::ExpectAttrs(kind_, attrs_, n); }

  BlockRV Block(size_t i) const { return kind_definition::Block(kind_, inputs_, i); }
  LoopRV Loop(size_t i) const { return kind_definition::Loop(kind_, inputs_, i); }
  ExprRV Expr(size_t i) const { return kind_definition::Expr(kind_, inputs_, i); }
  BlockOrLoop BlockOrLoopArg(size_t i) const {
    return kind_definition::BlockOrLoopArg(kind_, inputs_, i);
  }
  int64_t Int(size_t i) const { return kind_definition::Int(kind_, inputs_, i); }
  std::string Str(size_t i) const { return kind_definition::Str(kind_, inputs_, i); }
  std::vector<BlockRV> BlockList(size_t i) const {
    return kind_definition::BlockList(kind_, inputs_, i);
  }

  int64_t AttrInt(size_t i) const { return kind_definition::AttrInt(kind_, attrs_, i); }
  bool AttrBool(size_t i) const { return kind_definition::AttrBool(kind_, attrs_, i); }
  std::string AttrStr(size_t i) const { return kind_definition::AttrStr(kind_, attrs_, i); }
  std::vector<int64_t> AttrInts(size_t i) const {
    return kind_definition::AttrInts(kind_, attrs_, i);
  }
  std::vector<double> AttrFloats(size_t i) const {
    return kind_definition::AttrFloats(kind_, attrs_, i);
  }

  // The decision read as an integer / a list of them (decision() not null).
  int64_t DecisionInt() const { return kind_definition::DecisionInt(kind_, *decision_); }
  std::vector<int64_t> DecisionInts() const {
    return kind_definition::DecisionInts(kind_, *decision_);
  }

 private:
  const std::string& kind_;
  const std::vector<InstArg>& inputs_;
  const nlohmann::json& attrs_;
  const nlohmann::json* decision_;
};

// One instruction as a line of a schedule script,
// "a, b = sch.<method>(<arguments>)": the kind's builder adds the arguments
// in order from the rendered inputs, the attributes and the decision.
class PyCall {
 public:
  PyCall(const std::string& kind, const std::string& method, const std::vector<std::string>& inputs,
         const std::vector<std::string>& outputs, const nlohmann::json& attributes,
         const nlohmann::json* recorded_decision)
      : kind_(kind),
        method_(method),
        in(inputs),
        out(outputs),
        attrs(attributes),
        decision(recorded_decision) {}

  // Adds "name=value"; the value is already rendered as Python.
  PyCall& Arg(const std::string& name, const std::string& value);
  // Adds a value without a name (sch.fuse(l0, l1, ...)).
  PyCall& Positional(const std::string& value);
  // "outputs = sch.method(arguments)".
  std::string Line() const;

  // An attribute read as a boolean (the error names the kind).
  bool AttrBool(size_t i) const { return kind_definition::AttrBool(kind_, attrs, i); }

 private:
  const std::string& kind_;
  const std::string& method_;
  std::string args_;

 public:
  const std::vector<std::string>& in;   // inputs rendered as names / literals
  const std::vector<std::string>& out;  // output names
  const nlohmann::json& attrs;
  const nlohmann::json* decision;  // null when not recorded
};

struct KindTraits {
  // Pure kinds only look things up or sample; unused ones can be dropped.
  bool is_pure = false;
  // Sampling kinds carry a decision.
  bool has_decision = false;
};

using ApplyFn = std::function<std::vector<RVRef>(Schedule& sch, const Args& args)>;
using PythonFn = std::function<void(PyCall& call)>;
using CheckFn =
    std::function<std::string(const std::vector<InstArg>& inputs, const nlohmann::json& attrs)>;

// "CacheRead" -> "cache_read", "RFactor" -> "rfactor": the Python method of
// a kind.
std::string PythonMethod(const std::string& kind);

// The instruction kind `name` (InstructionKind in instruction.h).
InstructionKind DefineKind(const std::string& name, KindTraits traits, ApplyFn apply,
                           PythonFn python, CheckFn check = nullptr);

}  // namespace kiln::ir::kind_definition
