// Reading instruction inputs and attributes with clear errors, for the
// instruction kinds' apply functions (a hand-edited or foreign trace may
// carry anything).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ir/schedule/instruction.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/trace.h"

namespace kiln::ir::kind_definition {

// Throws TraceError "<kind>: <what>".
[[noreturn]] void Fail(const std::string& kind, const std::string& what);

void ExpectInputs(const std::string& kind, const std::vector<InstArg>& in, size_t n);
void ExpectAttrs(const std::string& kind, const nlohmann::json& attrs, size_t n);

BlockRV Block(const std::string& kind, const std::vector<InstArg>& in, size_t i);
LoopRV Loop(const std::string& kind, const std::vector<InstArg>& in, size_t i);
ExprRV Expr(const std::string& kind, const std::vector<InstArg>& in, size_t i);
BlockOrLoop BlockOrLoopArg(const std::string& kind, const std::vector<InstArg>& in, size_t i);
int64_t Int(const std::string& kind, const std::vector<InstArg>& in, size_t i);
std::string Str(const std::string& kind, const std::vector<InstArg>& in, size_t i);
// A list of blocks (an InstArg list), e.g. consumer_blocks.
std::vector<BlockRV> BlockList(const std::string& kind, const std::vector<InstArg>& in, size_t i);

int64_t AttrInt(const std::string& kind, const nlohmann::json& attrs, size_t i);
bool AttrBool(const std::string& kind, const nlohmann::json& attrs, size_t i);
std::string AttrStr(const std::string& kind, const nlohmann::json& attrs, size_t i);
std::vector<int64_t> AttrInts(const std::string& kind, const nlohmann::json& attrs, size_t i);
std::vector<double> AttrFloats(const std::string& kind, const nlohmann::json& attrs, size_t i);

int64_t DecisionInt(const std::string& kind, const nlohmann::json& d);
std::vector<int64_t> DecisionInts(const std::string& kind, const nlohmann::json& d);

// Python rendering helpers.
std::string PyBool(bool b);                          // "True" / "False"
std::string PyList(const std::vector<std::string>& items);  // "[a, b]"
std::string PyStr(const std::string& s);             // "\"s\""
// A JSON value as Python writes it: [1, 2], True, "s", 0.25.
std::string PyValue(const nlohmann::json& v);
// "a, b = " for outputs (or "" when none); names given.
std::string PyAssign(const std::vector<std::string>& outputs);

}  // namespace kiln::ir::kind_definition
