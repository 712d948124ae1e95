#include "ir/expr.h"

#include <array>
#include <cstring>

namespace kiln::ir {

namespace {

struct CallOpInfo {
  const char* name;
  int arity;
};

constexpr std::array<CallOpInfo, static_cast<size_t>(CallOp::kCount_)> kCallOps = {{
    {"if_then_else", 3}, {"exp", 1},   {"exp2", 1},  {"exp10", 1},    {"log", 1},
    {"log2", 1},         {"log10", 1}, {"log1p", 1}, {"sqrt", 1},     {"rsqrt", 1},
    {"tanh", 1},         {"sigmoid", 1}, {"pow", 2}, {"fabs", 1},     {"erf", 1},
    {"floor", 1},        {"ceil", 1},  {"round", 1}, {"trunc", 1},    {"sin", 1},
    {"cos", 1},          {"tan", 1},   {"atan", 1},  {"isnan", 1},    {"isinf", 1},
    {"isfinite", 1},     {"fmod", 2},  {"tvm_storage_sync", 1},
    {"tvm_warp_shuffle_down", 3},
}};

}  // namespace

const char* CallOpName(CallOp op) { return kCallOps[static_cast<size_t>(op)].name; }

int CallOpArity(CallOp op) { return kCallOps[static_cast<size_t>(op)].arity; }

bool CallOpFromName(const std::string& name, CallOp* out) {
  for (size_t i = 0; i < kCallOps.size(); ++i) {
    if (name == kCallOps[i].name) {
      *out = static_cast<CallOp>(i);
      return true;
    }
  }
  return false;
}

}  // namespace kiln::ir
