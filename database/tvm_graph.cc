#include "database/tvm_graph.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "database/base64.h"
#include "ir/error.h"
#include "ir/op.h"

namespace kiln::database {

namespace {

using nlohmann::json;

// Nesting of statements and expressions followed at once; real programs stay
// far below it, and Kiln's printer and destructor recurse over the tree.
constexpr int kMaxDepth = 200;
// Expression nodes in the whole function once shared nodes are expanded:
// real programs stay far below it.
constexpr int64_t kMaxExpandedNodes = 1 << 20;

// TVM's enum values as the graph stores them (include/tvm/tirx/stmt.h ForKind,
// include/tvm/tirx/var.h IterVarType).
ir::ForKind ForKindFromTvm(int64_t k, bool* ok) {
  *ok = true;
  switch (k) {
    case 0:
      return ir::ForKind::kSerial;
    case 1:
      return ir::ForKind::kParallel;
    case 2:
      return ir::ForKind::kVectorized;
    case 3:
      return ir::ForKind::kUnrolled;
    case 4:
      return ir::ForKind::kThreadBinding;
    default:
      *ok = false;
      return ir::ForKind::kSerial;
  }
}

class GraphReader {
 public:
  explicit GraphReader(const json& graph) {
    if (!graph.is_object() || !graph.contains("nodes") || !graph["nodes"].is_array()) {
      throw TvmImportError("TVM JSON graph: expected an object with a \"nodes\" array");
    }
    nodes_ = &graph["nodes"];
    if (!graph.contains("root_index") || !graph["root_index"].is_number_integer()) {
      throw TvmImportError("TVM JSON graph: missing integer \"root_index\"");
    }
    root_ = graph["root_index"].get<int64_t>();
  }

  ir::PrimFunc Module() {
    const json& mod = Node(root_);
    std::string type = TypeOf(root_);
    if (type == "tirx.PrimFunc") return Func(root_, "main");
    if (type != "ir.IRModule") Unsupported(root_, "a module or PrimFunc at the root");
    std::vector<int64_t> funcs = MapItems(Field(root_, mod, "functions"));
    if (funcs.size() != 2) {
      Fail(root_, "the module holds " + std::to_string(funcs.size() / 2) +
                      " functions; Kiln imports modules holding exactly one PrimFunc");
    }
    std::string name = "main";
    if (TypeOf(funcs[0]) == "ir.GlobalVar")
      name = Str(Field(funcs[0], Node(funcs[0]), "name_hint"));
    if (TypeOf(funcs[1]) != "tirx.PrimFunc") Unsupported(funcs[1], "a PrimFunc in the module");
    return Func(funcs[1], name);
  }

 private:
  // ---- raw access ----
  [[noreturn]] void Fail(int64_t idx, const std::string& msg) const {
    throw TvmImportError("TVM JSON graph node " + std::to_string(idx) + ": " + msg);
  }
  [[noreturn]] void Unsupported(int64_t idx, const std::string& expected) const {
    Fail(idx,
         "cannot convert node kind '" + TypeOf(idx) + "' to Kiln IR (expected " + expected + ")");
  }
  const json& Node(int64_t idx) const {
    if (idx < 0 || static_cast<size_t>(idx) >= nodes_->size()) {
      throw TvmImportError("TVM JSON graph: node index " + std::to_string(idx) +
                           " is out of range (" + std::to_string(nodes_->size()) + " nodes)");
    }
    const json& n = (*nodes_)[static_cast<size_t>(idx)];
    if (!n.is_object() || !n.contains("type") || !n["type"].is_string()) {
      Fail(idx, "a node is an object with a string \"type\"");
    }
    return n;
  }
  std::string TypeOf(int64_t idx) const { return Node(idx)["type"].get<std::string>(); }
  const json& Data(int64_t idx) const {
    const json& n = Node(idx);
    if (!n.contains("data")) Fail(idx, "node of kind '" + TypeOf(idx) + "' has no data");
    return n["data"];
  }
  // An object field holding a node index.
  int64_t Field(int64_t idx, const json& node, const char* name) const {
    const json& d = node.contains("data") ? node["data"] : node;
    if (!d.is_object() || !d.contains(name) || !d[name].is_number_integer()) {
      Fail(idx, std::string("node of kind '") + TypeOf(idx) + "' lacks field '" + name + "'");
    }
    return d[name].get<int64_t>();
  }
  int64_t Field(int64_t idx, const char* name) const { return Field(idx, Node(idx), name); }
  // A plain integer field (inline).
  int64_t Inline(int64_t idx, const char* name) const { return Field(idx, name); }
  bool IsNone(int64_t idx) const { return TypeOf(idx) == "None"; }
  std::string Str(int64_t idx) const {
    if (TypeOf(idx) != "ffi.String") Unsupported(idx, "a string");
    const json& d = Data(idx);
    if (!d.is_string()) Fail(idx, "a string node holds a string");
    return d.get<std::string>();
  }
  std::vector<int64_t> Items(int64_t idx, const char* kind) const {
    if (TypeOf(idx) != kind) Unsupported(idx, kind);
    const json& d = Data(idx);
    if (!d.is_array()) Fail(idx, std::string(kind) + " holds an array of node indices");
    std::vector<int64_t> out;
    for (const json& x : d) {
      if (!x.is_number_integer()) Fail(idx, std::string(kind) + " holds node indices");
      out.push_back(x.get<int64_t>());
    }
    return out;
  }
  std::vector<int64_t> Array(int64_t idx) const { return Items(idx, "ffi.Array"); }
  std::vector<int64_t> MapItems(int64_t idx) const {
    std::vector<int64_t> out = Items(idx, "ffi.Map");
    if (out.size() % 2 != 0) Fail(idx, "a map holds key, value pairs");
    return out;
  }
  ir::DataType DType(int64_t idx) const {
    if (TypeOf(idx) != "ir.PrimType") Unsupported(idx, "a primitive type");
    const json& d = Data(idx);
    if (!d.is_object() || !d.contains("dtype") || !d["dtype"].is_string()) {
      Fail(idx, "ir.PrimType lacks its dtype string");
    }
    ir::DataType t;
    std::string s = d["dtype"].get<std::string>();
    if (!ir::DataType::Parse(s, &t)) Fail(idx, "unknown data type \"" + s + "\"");
    return t;
  }

  struct DepthGuard {
    DepthGuard(GraphReader* r, int64_t idx) : r(r) {
      if (++r->depth_ > kMaxDepth) r->Fail(idx, "the program is nested too deeply");
    }
    ~DepthGuard() { --r->depth_; }
    GraphReader* r;
  };

  // ---- variables and buffers (shared by identity: same node, same object) ----
  ir::Var VarAt(int64_t idx) {
    if (auto it = vars_.find(idx); it != vars_.end()) return it->second;
    if (TypeOf(idx) != "ir.Var") Unsupported(idx, "a variable");
    int64_t ty = Field(idx, "ty");
    if (TypeOf(ty) != "ir.PrimType") Unsupported(ty, "a scalar variable's type");
    ir::Var v(Str(Field(idx, "name")), DType(ty));
    vars_.emplace(idx, v);
    return v;
  }

  ir::Buffer BufferAt(int64_t idx) {
    if (auto it = buffers_.find(idx); it != buffers_.end()) return it->second;
    if (TypeOf(idx) != "ir.Var") Unsupported(idx, "a buffer variable");
    int64_t ty = Field(idx, "ty");
    if (TypeOf(ty) != "tirx.BufferType") Unsupported(ty, "a buffer type");
    if (!building_.insert(idx).second) Fail(idx, "a buffer's shape refers to the buffer itself");
    auto n = std::make_shared<ir::BufferNode>();
    n->name = Str(Field(idx, "name"));
    n->dtype = DType(Field(ty, "dtype"));
    if (n->dtype.is_handle() || n->dtype.is_vector()) Fail(ty, "unsupported buffer element type");
    for (int64_t d : Array(Field(ty, "shape"))) n->shape.push_back(Index(d));
    for (int64_t s : Array(Field(ty, "strides"))) n->strides.push_back(Index(s));
    if (!n->strides.empty() && n->strides.size() != n->shape.size()) {
      Fail(ty, "a buffer has as many strides as dimensions");
    }
    int64_t scope = Field(ty, "storage_scope");
    n->scope = IsNone(scope) ? "global" : Str(scope);
    if (n->scope.empty()) n->scope = "global";
    int64_t off = Field(ty, "elem_offset");
    int64_t off_value = 0;
    if (!IsNone(off) && (!ir::AsConstInt(Expr(off), &off_value) || off_value != 0)) {
      Fail(off, "buffer '" + n->name + "' has an element offset; Kiln buffers start at 0");
    }
    int64_t layout = Field(ty, "layout");
    if (!IsNone(layout)) Unsupported(layout, "no layout on buffer '" + n->name + "'");
    // 64 bytes is TVM's default alignment, which Kiln spells 0.
    int64_t align = Inline(ty, "data_alignment");
    if (align < 0) Fail(ty, "negative buffer alignment");
    n->align = align == 64 ? 0 : align;
    building_.erase(idx);
    ir::Buffer b(std::move(n));
    buffers_.emplace(idx, b);
    return b;
  }

  // ---- expressions ----
  ir::Expr Index(int64_t idx) {
    ir::Expr e = Expr(idx);
    if (!e.dtype().is_integer() || !e.dtype().is_scalar()) {
      Fail(idx, "an index or extent must be a scalar integer, got " + e.dtype().str());
    }
    return e;
  }

  int64_t IntData(int64_t idx) const {
    if (TypeOf(idx) != "int") Unsupported(idx, "an integer value");
    const json& d = Data(idx);
    if (!d.is_number_integer()) Fail(idx, "an int node holds an integer");
    return d.get<int64_t>();
  }

  // Expressions are shared in the graph but trees in Kiln: a node reached
  // twice is built once and shared, yet printed (and so stored) twice, so
  // the expanded size is counted against kMaxExpandedNodes.
  ir::Expr Expr(int64_t idx) {
    if (auto it = exprs_.find(idx); it != exprs_.end()) {
      Expand(idx, expanded_size_.at(idx));
      return it->second;
    }
    DepthGuard guard(this, idx);
    if (!building_.insert(idx).second) Fail(idx, "an expression refers to itself");
    int64_t before = expanded_;
    ir::Expr e = BuildExpr(idx);
    Expand(idx, 1);
    building_.erase(idx);
    exprs_.emplace(idx, e);
    expanded_size_.emplace(idx, expanded_ - before);
    return e;
  }
  void Expand(int64_t idx, int64_t n) {
    expanded_ += n;
    if (expanded_ > kMaxExpandedNodes)
      Fail(idx, "the program is too large once its shared nodes are expanded");
  }

  ir::Expr BuildExpr(int64_t idx) {
    static const std::unordered_map<std::string, ir::Expr (*)(ir::Expr, ir::Expr)> kBinary = {
        {"prim.Add", ir::Add},
        {"prim.Sub", ir::Sub},
        {"prim.Mul", ir::Mul},
        {"prim.Div", ir::Div},
        {"prim.Mod", ir::TruncMod},
        {"prim.FloorDiv", ir::FloorDiv},
        {"prim.FloorMod", ir::FloorMod},
        {"prim.Min", ir::Min},
        {"prim.Max", ir::Max},
        {"prim.EQ", ir::EQ},
        {"prim.NE", ir::NE},
        {"prim.LT", ir::LT},
        {"prim.LE", ir::LE},
        {"prim.GT", ir::GT},
        {"prim.GE", ir::GE},
        {"prim.And", ir::And},
        {"prim.Or", ir::Or}};
    std::string type = TypeOf(idx);
    try {
      if (auto it = kBinary.find(type); it != kBinary.end()) {
        ir::Expr a = Expr(Field(idx, "a"));
        ir::Expr b = Expr(Field(idx, "b"));
        return it->second(a, b);
      }
      if (type == "ir.IntImm") {
        ir::DataType t = DType(Field(idx, "ty"));
        int64_t v = IntData(Field(idx, "value"));
        if (t.is_bool()) return ir::BoolImm(v != 0);
        return ir::IntImm(v, t);
      }
      if (type == "int") return ir::IntImm(IntData(idx), ir::DataType::Int32());
      if (type == "bool") {
        const json& d = Data(idx);
        if (!d.is_boolean()) Fail(idx, "a bool node holds true or false");
        return ir::BoolImm(d.get<bool>());
      }
      if (type == "ir.FloatImm") {
        ir::DataType t = DType(Field(idx, "ty"));
        const json& d = Data(idx);
        if (!d.is_object() || !d.contains("value") || !d["value"].is_number()) {
          Fail(idx, "ir.FloatImm lacks its value");
        }
        if (!t.is_float()) Fail(idx, "a float constant of type " + t.str());
        return ir::FloatImm(d["value"].get<double>(), t);
      }
      if (type == "ir.Var") return VarAt(idx);
      if (type == "ir.TensorLoad" || type == "tirx.BufferLoad") {
        ir::Buffer b = BufferAt(Field(idx, type == "ir.TensorLoad" ? "source" : "buffer"));
        std::vector<ir::Expr> indices;
        for (int64_t i : Array(Field(idx, "indices"))) indices.push_back(Index(i));
        if (indices.size() != b.ndim()) Fail(idx, "load indexes buffer '" + b->name + "' wrongly");
        return ir::BufferLoad(b, std::move(indices));
      }
      if (type == "prim.Cast") return ir::Cast(DType(Field(idx, "ty")), Expr(Field(idx, "value")));
      if (type == "prim.Not") return ir::Not(Expr(Field(idx, "a")));
      if (type == "prim.Select") {
        return ir::Select(Expr(Field(idx, "condition")), Expr(Field(idx, "true_value")),
                          Expr(Field(idx, "false_value")));
      }
      if (type == "ir.Call") return Call(idx);
    } catch (const ir::IRError& e) {
      Fail(idx, std::string("invalid ") + type + ": " + e.what());
    }
    Unsupported(idx, "an expression of Kiln's subset");
  }

  ir::Expr Call(int64_t idx) {
    int64_t op = Field(idx, "op");
    if (TypeOf(op) != "ir.Op") Unsupported(op, "an operator");
    const json& d = Data(op);
    if (!d.is_string()) Fail(op, "ir.Op holds the operator's name");
    std::string full = d.get<std::string>();
    std::string name = full.substr(full.find('.') == std::string::npos ? 0 : full.find('.') + 1);
    ir::CallOp call_op;
    if (!ir::CallOpFromName(name, &call_op) || call_op == ir::CallOp::kStorageSync ||
        call_op == ir::CallOp::kWarpShuffleDown) {
      Fail(op, "cannot convert operator '" + full + "' to Kiln IR");
    }
    std::vector<ir::Expr> args;
    for (int64_t a : Array(Field(idx, "args"))) args.push_back(Expr(a));
    if (static_cast<int>(args.size()) != ir::CallOpArity(call_op)) {
      Fail(idx, "operator '" + full + "' takes " + std::to_string(ir::CallOpArity(call_op)) +
                    " arguments, got " + std::to_string(args.size()));
    }
    if (call_op == ir::CallOp::kIfThenElse) return ir::IfThenElse(args[0], args[1], args[2]);
    return ir::Call(call_op, std::move(args));
  }

  ir::Range RangeAt(int64_t idx) {
    if (TypeOf(idx) != "ir.Range") Unsupported(idx, "a range");
    return ir::Range{Index(Field(idx, "min")), Index(Field(idx, "extent"))};
  }

  // Annotation values: constants only, as in Kiln's text form.
  ir::Annotations Annotations(int64_t idx) {
    ir::Annotations out;
    std::vector<int64_t> kv = MapItems(idx);
    for (size_t i = 0; i < kv.size(); i += 2) {
      std::string key = Str(kv[i]);
      if (key.rfind("tirx.", 0) == 0) key = "tir." + key.substr(5);
      int64_t v = kv[i + 1];
      std::string type = TypeOf(v);
      if (type == "ffi.String") {
        out[key] = ir::StringImm(Str(v));
      } else if (type == "int" || type == "bool" || type == "ir.IntImm" || type == "ir.FloatImm") {
        out[key] = Expr(v);
      } else {
        Unsupported(v, "a constant annotation value for '" + key + "'");
      }
    }
    return out;
  }

  // ---- statements ----
  ir::Stmt Stmt(int64_t idx) {
    DepthGuard guard(this, idx);
    std::string type = TypeOf(idx);
    try {
      if (type == "tirx.SeqStmt") {
        std::vector<ir::Stmt> seq;
        for (int64_t s : Array(Field(idx, "seq"))) seq.push_back(Stmt(s));
        if (seq.empty()) Fail(idx, "an empty statement sequence");
        return ir::SeqStmt(std::move(seq));
      }
      if (type == "tirx.For") return For(idx);
      if (type == "s_tir.SBlockRealize" || type == "tirx.BlockRealize") return Realize(idx);
      if (type == "tirx.BufferStore") {
        ir::Buffer b = BufferAt(Field(idx, "buffer"));
        std::vector<ir::Expr> indices;
        for (int64_t i : Array(Field(idx, "indices"))) indices.push_back(Index(i));
        if (indices.size() != b.ndim()) Fail(idx, "store indexes buffer '" + b->name + "' wrongly");
        return ir::BufferStore(b, Expr(Field(idx, "value")), std::move(indices));
      }
      if (type == "tirx.IfThenElse") {
        int64_t else_idx = Field(idx, "else_case");
        return ir::IfThenElseStmt(Expr(Field(idx, "condition")), Stmt(Field(idx, "then_case")),
                                  IsNone(else_idx) ? ir::Stmt() : Stmt(else_idx));
      }
      if (type == "tirx.Evaluate") return ir::Evaluate(Expr(Field(idx, "value")));
    } catch (const ir::IRError& e) {
      Fail(idx, std::string("invalid ") + type + ": " + e.what());
    }
    Unsupported(idx, "a statement of Kiln's subset");
  }

  ir::Stmt For(int64_t idx) {
    bool ok = false;
    int64_t tvm_kind = Inline(idx, "kind");
    ir::ForKind kind = ForKindFromTvm(tvm_kind, &ok);
    if (!ok) Fail(idx, "unknown loop kind " + std::to_string(tvm_kind));
    int64_t step = Field(idx, "step");
    if (!IsNone(step)) {
      int64_t s = 0;
      if (!ir::AsConstInt(Expr(step), &s) || s != 1) Unsupported(step, "a loop without a step");
    }
    std::string thread;
    int64_t binding = Field(idx, "thread_binding");
    if (!IsNone(binding)) {
      if (TypeOf(binding) != "tirx.IterVar") Unsupported(binding, "a thread binding");
      thread = Str(Field(binding, "thread_tag"));
    }
    if (kind == ir::ForKind::kThreadBinding && thread.empty()) {
      Fail(idx, "a thread-bound loop without a thread tag");
    }
    ir::Var v = VarAt(Field(idx, "loop_var"));
    ir::Expr min = Index(Field(idx, "min"));
    ir::Expr extent = Index(Field(idx, "extent"));
    return ir::For(v, min, extent, kind, Stmt(Field(idx, "body")), thread,
                   Annotations(Field(idx, "annotations")));
  }

  std::vector<ir::BufferRegion> Regions(int64_t idx) {
    std::vector<ir::BufferRegion> out;
    for (int64_t r : Array(idx)) {
      std::string type = TypeOf(r);
      if (type != "ir.TensorRegion" && type != "tirx.BufferRegion")
        Unsupported(r, "a buffer region");
      ir::BufferRegion br;
      br.buffer = BufferAt(Field(r, type == "ir.TensorRegion" ? "source" : "buffer"));
      for (int64_t rg : Array(Field(r, "region"))) br.region.push_back(RangeAt(rg));
      if (br.region.size() != br.buffer.ndim()) {
        Fail(r, "region of buffer '" + br.buffer->name + "' has the wrong rank");
      }
      out.push_back(std::move(br));
    }
    return out;
  }

  ir::Stmt Realize(int64_t idx) {
    int64_t bidx = Field(idx, "block");
    std::string bt = TypeOf(bidx);
    if (bt != "s_tir.SBlock" && bt != "tirx.Block") Unsupported(bidx, "a block");
    if (!Array(Field(bidx, "match_buffers")).empty()) {
      Fail(bidx, "T.match_buffer inside a block is not supported");
    }
    ir::BlockNode node;
    node.name = Str(Field(bidx, "name_hint"));
    for (int64_t iv : Array(Field(bidx, "iter_vars"))) {
      if (TypeOf(iv) != "tirx.IterVar") Unsupported(iv, "an iteration variable");
      ir::IterVar out;
      out.var = VarAt(Field(iv, "var"));
      out.dom = RangeAt(Field(iv, "dom"));
      switch (Inline(iv, "iter_type")) {
        case 0:
          out.iter_type = ir::IterType::kDataPar;
          break;
        case 2:
          out.iter_type = ir::IterType::kCommReduce;
          break;
        case 3:
          out.iter_type = ir::IterType::kOrdered;
          break;
        case 4:
          out.iter_type = ir::IterType::kOpaque;
          break;
        default:
          Fail(iv, "unsupported block iteration type " + std::to_string(Inline(iv, "iter_type")));
      }
      node.iter_vars.push_back(out);
    }
    node.reads = Regions(Field(bidx, "reads"));
    node.writes = Regions(Field(bidx, "writes"));
    for (int64_t b : Array(Field(bidx, "alloc_buffers"))) node.alloc_buffers.push_back(BufferAt(b));
    node.annotations = Annotations(Field(bidx, "annotations"));
    int64_t init = Field(bidx, "init");
    if (!IsNone(init)) node.init = Stmt(init);
    node.body = Stmt(Field(bidx, "body"));
    std::vector<ir::Expr> values;
    for (int64_t v : Array(Field(idx, "iter_values"))) values.push_back(Index(v));
    ir::Expr pred = Expr(Field(idx, "predicate"));
    return ir::BlockRealize(std::move(values), pred, ir::MakeBlock(std::move(node)));
  }

  ir::PrimFunc Func(int64_t idx, const std::string& name) {
    ir::PrimFunc f;
    f.name = name;
    for (int64_t p : Array(Field(idx, "params"))) f.params.push_back(BufferAt(p));
    int64_t attrs = Field(idx, "attrs");
    if (!IsNone(attrs)) {
      if (TypeOf(attrs) != "ir.DictAttrs") Unsupported(attrs, "function attributes");
      f.attrs = Annotations(Field(attrs, "__dict__"));
      // TVM's bookkeeping, not part of what the function computes.
      f.attrs.erase("global_symbol");
      f.attrs.erase("s_tir");
    }
    int64_t body = Field(idx, "body");
    std::string bt = TypeOf(body);
    if (bt != "s_tir.SBlockRealize" && bt != "tirx.BlockRealize") {
      Unsupported(body, "a root block as the function body");
    }
    try {
      f.body = Stmt(body);
      (void)f.root_block();
    } catch (const ir::IRError& e) {
      Fail(body, std::string("invalid function body: ") + e.what());
    }
    return f;
  }

  const json* nodes_ = nullptr;
  int64_t root_ = 0;
  int depth_ = 0;
  std::unordered_map<int64_t, ir::Var> vars_;
  std::unordered_map<int64_t, ir::Buffer> buffers_;
  std::unordered_map<int64_t, ir::Expr> exprs_;
  std::unordered_set<int64_t> building_;
  std::unordered_map<int64_t, int64_t> expanded_size_;
  int64_t expanded_ = 0;
};

}  // namespace

ir::PrimFunc PrimFuncFromTvmGraph(const json& graph) { return GraphReader(graph).Module(); }

std::string DecodeTvmWorkloadBlob(const std::string& base64) {
  std::string bytes;
  if (!DecodeBase64(base64, &bytes)) throw TvmImportError("workload blob is not valid base64");
  size_t start = bytes.find_first_not_of(" \t\r\n");
  if (start != std::string::npos && bytes[start] == '{') return bytes;  // TVM up to 0.2x
  if (bytes.size() < 8) throw TvmImportError("workload blob is too short for its length prefix");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  if (n != bytes.size() - 8) {
    throw TvmImportError("workload blob's length prefix says " + std::to_string(n) + " bytes but " +
                         std::to_string(bytes.size() - 8) + " follow");
  }
  return bytes.substr(8);
}

}  // namespace kiln::database
