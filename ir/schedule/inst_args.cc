#include "ir/schedule/inst_args.h"

#include <limits>

namespace kiln::ir::kind_definition {

namespace {

const InstArg& At(const std::string& kind, const std::vector<InstArg>& in, size_t i) {
  if (i >= in.size()) Fail(kind, "missing input " + std::to_string(i));
  return in[i];
}

const nlohmann::json& AttrAt(const std::string& kind, const nlohmann::json& attrs, size_t i) {
  if (!attrs.is_array() || i >= attrs.size()) Fail(kind, "missing attribute " + std::to_string(i));
  return attrs[i];
}

RVRef RV(const std::string& kind, const std::vector<InstArg>& in, size_t i, RVKind want,
         const char* word) {
  const InstArg& a = At(kind, in, i);
  if (a.kind != InstArg::Kind::kRV || a.rv.kind != want) {
    Fail(kind, "input " + std::to_string(i) + " must be a " + word + " handle");
  }
  return a.rv;
}

int64_t JsonInt(const std::string& kind, const nlohmann::json& j, const std::string& what) {
  if (j.is_boolean()) return j.get<bool>() ? 1 : 0;
  if (j.is_number_unsigned()) {
    uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      Fail(kind, what + " is out of range");
    }
    return static_cast<int64_t>(u);
  }
  if (j.is_number_integer()) return j.get<int64_t>();
  Fail(kind, what + " must be an integer");
}

}  // namespace

void Fail(const std::string& kind, const std::string& what) { throw TraceError(kind + ": " + what); }

void ExpectInputs(const std::string& kind, const std::vector<InstArg>& in, size_t n) {
  if (in.size() != n) {
    Fail(kind, "expected " + std::to_string(n) + " input(s), got " + std::to_string(in.size()));
  }
}

void ExpectAttrs(const std::string& kind, const nlohmann::json& attrs, size_t n) {
  if (!attrs.is_array() || attrs.size() != n) {
    Fail(kind, "expected " + std::to_string(n) + " attribute(s), got " +
                   (attrs.is_array() ? std::to_string(attrs.size()) : std::string("a non-list")));
  }
}

BlockRV Block(const std::string& kind, const std::vector<InstArg>& in, size_t i) {
  return BlockRV{RV(kind, in, i, RVKind::kBlock, "block").id};
}
LoopRV Loop(const std::string& kind, const std::vector<InstArg>& in, size_t i) {
  return LoopRV{RV(kind, in, i, RVKind::kLoop, "loop").id};
}
ExprRV Expr(const std::string& kind, const std::vector<InstArg>& in, size_t i) {
  return ExprRV{RV(kind, in, i, RVKind::kExpr, "expression").id};
}

BlockOrLoop BlockOrLoopArg(const std::string& kind, const std::vector<InstArg>& in, size_t i) {
  const InstArg& a = At(kind, in, i);
  if (a.kind == InstArg::Kind::kRV && a.rv.kind == RVKind::kBlock) return BlockRV{a.rv.id};
  if (a.kind == InstArg::Kind::kRV && a.rv.kind == RVKind::kLoop) return LoopRV{a.rv.id};
  Fail(kind, "input " + std::to_string(i) + " must be a block or loop handle");
}

int64_t Int(const std::string& kind, const std::vector<InstArg>& in, size_t i) {
  const InstArg& a = At(kind, in, i);
  if (a.kind != InstArg::Kind::kInt) Fail(kind, "input " + std::to_string(i) + " must be an integer");
  return a.int_value;
}

std::string Str(const std::string& kind, const std::vector<InstArg>& in, size_t i) {
  const InstArg& a = At(kind, in, i);
  if (a.kind != InstArg::Kind::kString) Fail(kind, "input " + std::to_string(i) + " must be a string");
  return a.str_value;
}

std::vector<BlockRV> BlockList(const std::string& kind, const std::vector<InstArg>& in, size_t i) {
  const InstArg& a = At(kind, in, i);
  if (a.kind == InstArg::Kind::kNone) return {};
  if (a.kind != InstArg::Kind::kList) Fail(kind, "input " + std::to_string(i) + " must be a list");
  std::vector<BlockRV> out;
  for (size_t k = 0; k < a.list.size(); ++k) out.push_back(Block(kind, a.list, k));
  return out;
}

int64_t AttrInt(const std::string& kind, const nlohmann::json& attrs, size_t i) {
  return JsonInt(kind, AttrAt(kind, attrs, i), "attribute " + std::to_string(i));
}

bool AttrBool(const std::string& kind, const nlohmann::json& attrs, size_t i) {
  int64_t v = AttrInt(kind, attrs, i);
  if (v != 0 && v != 1) Fail(kind, "attribute " + std::to_string(i) + " must be a boolean");
  return v == 1;
}

std::string AttrStr(const std::string& kind, const nlohmann::json& attrs, size_t i) {
  const auto& j = AttrAt(kind, attrs, i);
  if (!j.is_string()) Fail(kind, "attribute " + std::to_string(i) + " must be a string");
  return j.get<std::string>();
}

std::vector<int64_t> AttrInts(const std::string& kind, const nlohmann::json& attrs, size_t i) {
  const auto& j = AttrAt(kind, attrs, i);
  if (!j.is_array()) Fail(kind, "attribute " + std::to_string(i) + " must be a list of integers");
  std::vector<int64_t> out;
  for (const auto& x : j) out.push_back(JsonInt(kind, x, "attribute " + std::to_string(i)));
  return out;
}

std::vector<double> AttrFloats(const std::string& kind, const nlohmann::json& attrs, size_t i) {
  const auto& j = AttrAt(kind, attrs, i);
  if (!j.is_array()) Fail(kind, "attribute " + std::to_string(i) + " must be a list of numbers");
  std::vector<double> out;
  for (const auto& x : j) {
    if (!x.is_number()) Fail(kind, "attribute " + std::to_string(i) + " must be a list of numbers");
    out.push_back(x.get<double>());
  }
  return out;
}

int64_t DecisionInt(const std::string& kind, const nlohmann::json& d) {
  return JsonInt(kind, d, "the decision");
}

std::vector<int64_t> DecisionInts(const std::string& kind, const nlohmann::json& d) {
  if (!d.is_array()) Fail(kind, "the decision must be a list of integers");
  std::vector<int64_t> out;
  for (const auto& x : d) out.push_back(JsonInt(kind, x, "the decision"));
  return out;
}

std::string PyBool(bool b) { return b ? "True" : "False"; }

std::string PyList(const std::vector<std::string>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
  return s + "]";
}

std::string PyStr(const std::string& s) { return nlohmann::json(s).dump(); }

std::string PyValue(const nlohmann::json& v) {
  if (v.is_array()) {
    std::vector<std::string> items;
    for (const auto& x : v) items.push_back(PyValue(x));
    return PyList(items);
  }
  if (v.is_boolean()) return PyBool(v.get<bool>());
  if (v.is_null()) return "None";
  return v.dump();
}

std::string PyAssign(const std::vector<std::string>& outputs) {
  if (outputs.empty()) return "";
  std::string s;
  for (size_t i = 0; i < outputs.size(); ++i) s += (i ? ", " : "") + outputs[i];
  return s + " = ";
}

}  // namespace kiln::ir::kind_definition
