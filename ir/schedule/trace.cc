#include "ir/schedule/trace.h"

#include <cstring>
#include <set>
#include <unordered_map>

#include "ir/schedule/schedule.h"

namespace kiln::ir {

namespace {

using nlohmann::json;

char Prefix(RVKind k) {
  switch (k) {
    case RVKind::kBlock: return 'b';
    case RVKind::kLoop: return 'l';
    case RVKind::kExpr: return 'v';
  }
  return '?';
}

uint64_t Key(RVRef r) { return (static_cast<uint64_t>(r.kind) << 32) | static_cast<uint32_t>(r.id); }

// TVM's naming: one running counter over all RVs in order of definition,
// prefixed by kind ("b0", "l1", "l2", "v3").
class RVNamer {
 public:
  std::string Define(RVRef r) {
    std::string name = Prefix(r.kind) + std::to_string(counter_++);
    names_[Key(r)] = name;
    return name;
  }
  std::string Use(RVRef r) const {
    auto it = names_.find(Key(r));
    if (it == names_.end()) throw TraceError("trace uses a random variable it never defines");
    return it->second;
  }

 private:
  int counter_ = 0;
  std::unordered_map<uint64_t, std::string> names_;
};

json ArgToJSON(const InstArg& a, const RVNamer& namer) {
  switch (a.kind) {
    case InstArg::Kind::kNone: return "None";
    case InstArg::Kind::kRV: return namer.Use(a.rv);
    case InstArg::Kind::kInt: return a.int_value;
    case InstArg::Kind::kFloat: return a.float_value;
    case InstArg::Kind::kString: return "\"" + a.str_value + "\"";
    case InstArg::Kind::kList: {
      json arr = json::array();
      for (const auto& x : a.list) arr.push_back(ArgToJSON(x, namer));
      return arr;
    }
  }
  return nullptr;
}

// Appends `a` to an identity key. Numbers end with ',', strings carry their
// length, lists their size: no two different arguments write the same text.
void AppendArgKey(const InstArg& a, std::string* out) {
  switch (a.kind) {
    case InstArg::Kind::kNone: *out += 'N'; return;
    case InstArg::Kind::kRV:
      *out += 'r';
      *out += Prefix(a.rv.kind);
      *out += std::to_string(a.rv.id);
      *out += ',';
      return;
    case InstArg::Kind::kInt: *out += 'i' + std::to_string(a.int_value) + ','; return;
    case InstArg::Kind::kFloat: {
      uint64_t bits = 0;
      static_assert(sizeof bits == sizeof a.float_value);
      std::memcpy(&bits, &a.float_value, sizeof bits);
      *out += 'f' + std::to_string(bits) + ',';
      return;
    }
    case InstArg::Kind::kString:
      *out += 's' + std::to_string(a.str_value.size()) + ':' + a.str_value;
      return;
    case InstArg::Kind::kList:
      *out += 'L' + std::to_string(a.list.size()) + ',';
      for (const InstArg& x : a.list) AppendArgKey(x, out);
      return;
  }
}

void AppendSized(const std::string& text, std::string* out) {
  *out += std::to_string(text.size());
  *out += ':';
  *out += text;
}

std::string ArgToPython(const InstArg& a, const RVNamer& namer) {
  switch (a.kind) {
    case InstArg::Kind::kNone: return "None";
    case InstArg::Kind::kRV: return namer.Use(a.rv);
    case InstArg::Kind::kInt: return std::to_string(a.int_value);
    case InstArg::Kind::kFloat: return json(a.float_value).dump();
    case InstArg::Kind::kString: return json(a.str_value).dump();
    case InstArg::Kind::kList: {
      std::string s = "[";
      for (size_t i = 0; i < a.list.size(); ++i) s += (i ? ", " : "") + ArgToPython(a.list[i], namer);
      return s + "]";
    }
  }
  return "";
}

std::string Where(size_t index, const std::string& kind) {
  return "trace instruction " + std::to_string(index) + " (" + kind + ")";
}

InstArg ArgFromJSON(const json& j, const std::unordered_map<std::string, RVRef>& rvs,
                    const std::string& where, int depth) {
  if (depth > 8) throw TraceError(where + ": inputs are nested too deeply");
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "None") return InstArg::None();
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') {
      return InstArg::Str(s.substr(1, s.size() - 2));
    }
    auto it = rvs.find(s);
    if (it == rvs.end()) throw TraceError(where + ": undefined random variable '" + s + "'");
    return InstArg::Of(it->second);
  }
  if (j.is_boolean()) return InstArg::Int(j.get<bool>() ? 1 : 0);
  // nlohmann reports unsigned numbers as integers too: test unsigned first.
  if (j.is_number_unsigned()) {
    if (j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      throw TraceError(where + ": integer input out of range");
    }
    return InstArg::Int(static_cast<int64_t>(j.get<uint64_t>()));
  }
  if (j.is_number_integer()) return InstArg::Int(j.get<int64_t>());
  if (j.is_number_float()) return InstArg::Float(j.get<double>());
  if (j.is_array()) {
    std::vector<InstArg> list;
    for (const auto& x : j) list.push_back(ArgFromJSON(x, rvs, where, depth + 1));
    return InstArg::List(std::move(list));
  }
  throw TraceError(where + ": an input must be a name, number, string or list");
}

// `index` and `kind` name the instruction in an error (the words are made
// only then: replay is a hot path).
void TranslateArg(const InstArg& a, const std::unordered_map<uint64_t, RVRef>& map, InstArg* out,
                  size_t index, const std::string& kind) {
  *out = a;
  if (a.kind == InstArg::Kind::kRV) {
    auto it = map.find(Key(a.rv));
    if (it == map.end()) {
      throw TraceError(Where(index, kind) + ": uses a random variable defined nowhere before it");
    }
    out->rv = it->second;
  } else if (a.kind == InstArg::Kind::kList) {
    for (size_t i = 0; i < a.list.size(); ++i) TranslateArg(a.list[i], map, &out->list[i], index, kind);
  }
}

void CollectUses(const InstArg& a, std::set<uint64_t>* used) {
  if (a.kind == InstArg::Kind::kRV) used->insert(Key(a.rv));
  for (const auto& x : a.list) CollectUses(x, used);
}

}  // namespace

std::optional<json> Trace::GetDecision(size_t index) const {
  auto it = decisions_.find(index);
  if (it == decisions_.end()) return std::nullopt;
  return it->second;
}

void Trace::Append(Instruction inst, std::optional<json> decision) {
  // Tuning traces have a few dozen instructions: grow once, not by doubling
  // through sizes glibc serves slowly.
  if (insts_.capacity() == 0) insts_.reserve(48);
  if (decision) decisions_[insts_.size()] = std::move(*decision);
  insts_.push_back(std::move(inst));
}

void Trace::Pop() {
  if (insts_.empty()) return;
  decisions_.erase(insts_.size() - 1);
  insts_.pop_back();
}

json Trace::AsJSON() const {
  RVNamer namer;
  json insts = json::array();
  for (const auto& inst : insts_) {
    json inputs = json::array();
    for (const auto& a : inst.inputs) inputs.push_back(ArgToJSON(a, namer));
    json outputs = json::array();
    for (const auto& o : inst.outputs) outputs.push_back(o.id < 0 ? "_" : namer.Define(o));
    insts.push_back(json::array({inst.kind, inputs, inst.attrs, outputs}));
  }
  json decisions = json::array();
  for (const auto& [index, d] : decisions_) decisions.push_back(json::array({index, d}));
  return json::array({insts, decisions});
}

std::string Trace::IdentityKey() const {
  std::string key;
  key.reserve(insts_.size() * 48);
  for (const Instruction& inst : insts_) {
    AppendSized(inst.kind, &key);
    key += std::to_string(inst.inputs.size()) + '(';
    for (const InstArg& a : inst.inputs) AppendArgKey(a, &key);
    // Most instructions have no attributes: skip the dump of an empty array.
    if (inst.attrs.is_array() && inst.attrs.empty()) {
      key += 'A';
    } else {
      AppendSized(inst.attrs.dump(), &key);
    }
    key += std::to_string(inst.outputs.size()) + ')';
    for (RVRef o : inst.outputs) AppendArgKey(InstArg::Of(o), &key);
  }
  key += '|';
  for (const auto& [index, d] : decisions_) {
    key += std::to_string(index) + '=';
    AppendSized(d.dump(), &key);
  }
  return key;
}

Trace Trace::FromJSONString(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    // parse_error, but also out_of_range for numbers too large for a double.
    throw TraceError(std::string("trace is not valid JSON: ") + e.what());
  }
  return FromJSON(j);
}

Trace Trace::FromJSON(const json& j) {
  if (!j.is_array() || j.empty() || j.size() > 2 || !j[0].is_array()) {
    throw TraceError("a trace is [[instructions...], [decisions...]]");
  }
  Trace trace;
  std::unordered_map<std::string, RVRef> rvs;
  int next_id = 0;
  for (size_t index = 0; index < j[0].size(); ++index) {
    const json& ij = j[0][index];
    std::string where = "trace instruction " + std::to_string(index);
    if (!ij.is_array() || ij.size() != 4 || !ij[0].is_string() || !ij[1].is_array() ||
        !ij[2].is_array() || !ij[3].is_array()) {
      throw TraceError(where + ": an instruction is [name, inputs, attrs, outputs]");
    }
    Instruction inst;
    const std::string name = ij[0].get<std::string>();
    const InstructionKind* kind = FindInstructionKind(name);
    if (kind == nullptr) throw TraceError(where + ": unknown instruction kind '" + name + "'");
    inst.kind = kind->name;
    where = Where(index, inst.kind);
    for (const auto& a : ij[1]) inst.inputs.push_back(ArgFromJSON(a, rvs, where, 0));
    inst.attrs = ij[2];
    for (const auto& o : ij[3]) {
      if (!o.is_string()) throw TraceError(where + ": outputs must be names");
      const std::string out = o.get<std::string>();
      if (out == "_") {
        inst.outputs.push_back(RVRef{RVKind::kExpr, -1});
        continue;
      }
      RVKind k;
      switch (out.empty() ? '?' : out[0]) {
        case 'b': k = RVKind::kBlock; break;
        case 'l': k = RVKind::kLoop; break;
        case 'v': k = RVKind::kExpr; break;
        default: throw TraceError(where + ": output '" + out + "' must be named b<i>, l<i> or v<i>");
      }
      if (rvs.count(out)) throw TraceError(where + ": random variable '" + out + "' is defined twice");
      RVRef r{k, next_id++};
      rvs[out] = r;
      inst.outputs.push_back(r);
    }
    if (kind->check) {
      std::string err = kind->check(inst.inputs, inst.attrs);
      if (!err.empty()) throw TraceError(where + ": " + err);
    }
    trace.insts_.push_back(std::move(inst));
  }
  if (j.size() == 2) {
    if (!j[1].is_array()) throw TraceError("trace decisions must be a list of [index, decision]");
    for (const auto& dj : j[1]) {
      if (!dj.is_array() || dj.size() != 2 || !dj[0].is_number_integer()) {
        throw TraceError("a trace decision is [instruction index, decision]");
      }
      // Clamp huge unsigned indices so they read as "does not exist".
      int64_t index = dj[0].is_number_unsigned() && dj[0].get<uint64_t>() > (uint64_t{1} << 40)
                          ? INT64_MAX
                          : dj[0].get<int64_t>();
      if (index < 0 || index >= static_cast<int64_t>(trace.insts_.size())) {
        throw TraceError("trace decision for instruction " + std::to_string(index) +
                         ", which does not exist");
      }
      const Instruction& inst = trace.insts_[index];
      if (!FindInstructionKind(inst.kind)->has_decision) {
        throw TraceError(Where(index, inst.kind) + ": this kind takes no decision");
      }
      if (trace.decisions_.count(index)) {
        throw TraceError(Where(index, inst.kind) + ": two decisions for one instruction");
      }
      trace.decisions_[index] = dj[1];
    }
  }
  return trace;
}

std::string Trace::AsPython() const {
  RVNamer namer;
  std::string out = "def apply_trace(sch):\n";
  if (insts_.empty()) out += "  pass\n";
  for (size_t i = 0; i < insts_.size(); ++i) {
    const Instruction& inst = insts_[i];
    std::vector<std::string> inputs, outputs;
    for (const auto& a : inst.inputs) inputs.push_back(ArgToPython(a, namer));
    for (const auto& o : inst.outputs) outputs.push_back(o.id < 0 ? "_" : namer.Define(o));
    const InstructionKind* kind = FindInstructionKind(inst.kind);
    auto d = decisions_.find(i);
    out += "  " + kind->as_python(inputs, outputs, inst.attrs,
                                  d == decisions_.end() ? nullptr : &d->second) + "\n";
  }
  return out;
}

size_t Trace::PostprocIndex() const {
  for (size_t i = 0; i < insts_.size(); ++i) {
    if (insts_[i].kind == "EnterPostproc") return i;
  }
  return insts_.size();
}

Trace Trace::Simplified(bool remove_postproc) const {
  size_t end = remove_postproc ? PostprocIndex() : insts_.size();
  std::set<uint64_t> used;
  std::vector<bool> keep(end, false);
  for (size_t i = end; i-- > 0;) {
    const Instruction& inst = insts_[i];
    bool needed = !FindInstructionKind(inst.kind)->is_pure;
    for (const auto& o : inst.outputs) {
      if (o.id >= 0 && used.count(Key(o))) needed = true;
    }
    if (!needed) continue;
    keep[i] = true;
    for (const auto& a : inst.inputs) CollectUses(a, &used);
  }
  Trace out;
  for (size_t i = 0; i < end; ++i) {
    if (!keep[i]) continue;
    out.Append(insts_[i], GetDecision(i));
  }
  return out;
}

Trace Trace::WithDecision(size_t index, json decision, bool remove_postproc) const {
  Trace out = *this;
  if (remove_postproc) {
    size_t end = PostprocIndex();
    if (index >= end) throw TraceError("WithDecision: instruction is past EnterPostproc");
    while (out.insts_.size() > end) out.Pop();
  }
  if (index >= out.insts_.size()) throw TraceError("WithDecision: no such instruction");
  out.decisions_[index] = std::move(decision);
  return out;
}

Trace Trace::WithoutDecisions() const {
  Trace out = *this;
  out.decisions_.clear();
  return out;
}

void Trace::ApplyToSchedule(Schedule* sch, bool remove_postproc,
                            const DecisionProvider& provider) const {
  std::unordered_map<uint64_t, RVRef> map;
  size_t end = remove_postproc ? PostprocIndex() : insts_.size();
  for (size_t i = 0; i < end; ++i) {
    const Instruction& inst = insts_[i];
    const InstructionKind* kind = FindInstructionKind(inst.kind);
    if (kind == nullptr) throw TraceError(Where(i, inst.kind) + ": unknown instruction kind");
    std::vector<InstArg> inputs(inst.inputs.size());
    for (size_t k = 0; k < inst.inputs.size(); ++k) {
      TranslateArg(inst.inputs[k], map, &inputs[k], i, inst.kind);
    }
    std::optional<json> decision = GetDecision(i);
    if (provider && kind->has_decision) decision = provider(inst, inputs, decision);
    std::vector<RVRef> outputs;
    try {
      outputs = kind->apply(*sch, inputs, inst.attrs, decision ? &*decision : nullptr);
    } catch (const TraceError& e) {
      throw TraceError("trace instruction " + std::to_string(i) + ": " + e.what());
    }
    if (outputs.size() != inst.outputs.size()) {
      throw TraceError(Where(i, inst.kind) + ": produced " + std::to_string(outputs.size()) +
                       " output(s), the trace names " + std::to_string(inst.outputs.size()));
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      const RVRef& old = inst.outputs[k];
      if (old.id < 0) continue;
      if (old.kind != outputs[k].kind) {
        throw TraceError(Where(i, inst.kind) + ": output " + std::to_string(k) +
                         " has the wrong kind of handle");
      }
      map[Key(old)] = outputs[k];
    }
  }
}

}  // namespace kiln::ir
