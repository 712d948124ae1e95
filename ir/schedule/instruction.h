// Instructions: one recorded call of a schedule primitive.
//
// An instruction holds its kind, its inputs (random variables and plain
// values), its attributes (plain JSON values) and the random variables it
// defined. The trace JSON follows TVM's shape:
//   [name, inputs, attrs, outputs]
// where inputs name RVs as "b0" / "l1" / "v2", None as "None", and strings
// wrapped in quotes ("\"local\""); attrs are raw JSON.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kiln::ir {

class Schedule;

enum class RVKind : uint8_t { kBlock, kLoop, kExpr };

// A random variable of a schedule: its kind and its slot in the symbol table.
struct RVRef {
  RVKind kind = RVKind::kBlock;
  int id = -1;
  bool operator==(const RVRef&) const = default;
};

struct BlockRV {
  int id = -1;
  RVRef ref() const { return {RVKind::kBlock, id}; }
};
struct LoopRV {
  int id = -1;
  RVRef ref() const { return {RVKind::kLoop, id}; }
};
struct ExprRV {
  int id = -1;
  RVRef ref() const { return {RVKind::kExpr, id}; }
};

// One instruction input: None, an RV, an integer, a float, a string or a list.
struct InstArg {
  enum class Kind : uint8_t { kNone, kRV, kInt, kFloat, kString, kList };
  Kind kind = Kind::kNone;
  RVRef rv;
  int64_t int_value = 0;  // kInt
  double float_value = 0;  // kFloat
  std::string str_value;  // kString
  std::vector<InstArg> list;

  static InstArg None() { return {}; }
  static InstArg Of(RVRef r) { InstArg a; a.kind = Kind::kRV; a.rv = r; return a; }
  static InstArg Int(int64_t v) { InstArg a; a.kind = Kind::kInt; a.int_value = v; return a; }
  static InstArg Float(double v) { InstArg a; a.kind = Kind::kFloat; a.float_value = v; return a; }
  static InstArg Str(std::string v) { InstArg a; a.kind = Kind::kString; a.str_value = std::move(v); return a; }
  static InstArg List(std::vector<InstArg> v) { InstArg a; a.kind = Kind::kList; a.list = std::move(v); return a; }
};

struct Instruction {
  std::string kind;
  std::vector<InstArg> inputs;
  nlohmann::json attrs = nlohmann::json::array();
  std::vector<RVRef> outputs;
};

// What an instruction kind knows: how to re-apply it to a schedule and how to
// print it as a line of a schedule script. Every kind is listed in
// instruction_kind.cc.
struct InstructionKind {
  std::string name;
  // Pure kinds only look things up or sample; unused ones can be dropped.
  bool is_pure = false;
  // Sampling kinds carry a decision.
  bool has_decision = false;
  // Replays the instruction on `sch` with inputs already translated to sch's
  // RVs; `decision` is the decision to reuse (null: sample afresh). Returns
  // the new outputs, one per recorded output. Throws ScheduleError.
  std::function<std::vector<RVRef>(Schedule& sch, const std::vector<InstArg>& inputs,
                                   const nlohmann::json& attrs, const nlohmann::json* decision)>
      apply;
  // The instruction as one line of a schedule script, e.g.
  // "l1, l2 = sch.split(loop=l0, factors=[v3, v4], preserve_unit_iters=True)".
  // Inputs and outputs come already rendered as names / literals.
  std::function<std::string(const std::vector<std::string>& inputs,
                            const std::vector<std::string>& outputs, const nlohmann::json& attrs,
                            const nlohmann::json* decision)>
      as_python;
  // Validates the shape of inputs and attrs of a parsed instruction; returns
  // an error message, or empty when fine. May be null (no extra checks).
  std::function<std::string(const std::vector<InstArg>& inputs, const nlohmann::json& attrs)>
      check;
};

// The kind called `name` (TVM's newer "GetSBlock" is an alias of GetBlock), or
// nullptr.
const InstructionKind* FindInstructionKind(const std::string& name);
// Every registered kind, in a fixed order.
const std::vector<const InstructionKind*>& AllInstructionKinds();

}  // namespace kiln::ir
