#include "database/tvm_export.h"

#include <nlohmann/json.hpp>
#include <unordered_map>

#include "database/base64.h"
#include "database/tvm_graph.h"
#include "database/tvm_target.h"
#include "ir/op.h"
#include "ir/structural_hash.h"
#include "ir/text/parser.h"

namespace kiln::database {

namespace {

using nlohmann::json;

// What TVM writes for a failed measurement (database/tvm_import.cc reads it).
constexpr double kTvmFailedSeconds = 1e10;

// Builds the node list bottom-up: a node is appended after the nodes it
// refers to, as tvm-ffi writes it. Index 0 is None (a null field).
class GraphWriter {
 public:
  GraphWriter() { nodes_.push_back(json{{"type", "None"}}); }

  json Finish(int64_t root) {
    return json{{"root_index", root},
                {"nodes", std::move(nodes_)},
                {"metadata", json{{"tvm_version", "0.27.0"}}}};
  }

  int64_t Add(const char* type, json data) {
    nodes_.push_back(json{{"type", type}, {"data", std::move(data)}});
    return static_cast<int64_t>(nodes_.size()) - 1;
  }
  int64_t String(const std::string& s) { return Add("ffi.String", s); }
  int64_t Array(const std::vector<int64_t>& items) { return Add("ffi.Array", items); }
  int64_t Map(const std::vector<std::pair<int64_t, int64_t>>& kv) {
    json flat = json::array();
    for (const auto& [k, v] : kv) {
      flat.push_back(k);
      flat.push_back(v);
    }
    return Add("ffi.Map", flat);
  }
  int64_t PrimType(const ir::DataType& t) {
    return Add("ir.PrimType", json{{"span", 0}, {"dtype", t.str()}});
  }
  int64_t IntImm(int64_t v, const ir::DataType& t) {
    int64_t ty = PrimType(t);
    int64_t value = Add("int", v);
    return Add("ir.IntImm", json{{"span", 0}, {"ty", ty}, {"value", value}});
  }

  int64_t Var(const ir::VarNode* v) {
    if (auto it = vars_.find(v); it != vars_.end()) return it->second;
    int64_t ty = PrimType(v->dtype);
    int64_t name = String(v->name);
    int64_t idx = Add("ir.Var", json{{"span", 0}, {"ty", ty}, {"name", name}});
    vars_.emplace(v, idx);
    return idx;
  }

  int64_t Buffer(const ir::Buffer& b) {
    if (auto it = buffers_.find(b.get()); it != buffers_.end()) return it->second;
    int64_t dtype = PrimType(b->dtype);
    int64_t scope = String(b->scope);
    std::vector<int64_t> shape, strides;
    for (const auto& d : b->shape) shape.push_back(Expr(d));
    for (const auto& s : b->strides) strides.push_back(Expr(s));
    int64_t shape_idx = Array(shape);
    int64_t strides_idx = Array(strides);
    int64_t offset = IntImm(0, ir::DataType::Int32());
    int64_t addr = Array({});
    int64_t ty = Add("tirx.BufferType", json{{"span", 0},
                                             {"dtype", dtype},
                                             {"storage_scope", scope},
                                             {"shape", shape_idx},
                                             {"strides", strides_idx},
                                             {"elem_offset", offset},
                                             {"data_alignment", b->align == 0 ? 64 : b->align},
                                             {"offset_factor", 1},
                                             {"layout", 0},
                                             {"allocated_addr", addr}});
    int64_t name = String(b->name);
    int64_t idx = Add("ir.Var", json{{"span", 0}, {"ty", ty}, {"name", name}});
    buffers_.emplace(b.get(), idx);
    return idx;
  }

  int64_t Expr(const ir::Expr& e) {
    static const std::unordered_map<ir::ExprKind, const char*> kBinary = {
        {ir::ExprKind::kAdd, "prim.Add"},
        {ir::ExprKind::kSub, "prim.Sub"},
        {ir::ExprKind::kMul, "prim.Mul"},
        {ir::ExprKind::kDiv, "prim.Div"},
        {ir::ExprKind::kMod, "prim.Mod"},
        {ir::ExprKind::kFloorDiv, "prim.FloorDiv"},
        {ir::ExprKind::kFloorMod, "prim.FloorMod"},
        {ir::ExprKind::kMin, "prim.Min"},
        {ir::ExprKind::kMax, "prim.Max"},
        {ir::ExprKind::kEQ, "prim.EQ"},
        {ir::ExprKind::kNE, "prim.NE"},
        {ir::ExprKind::kLT, "prim.LT"},
        {ir::ExprKind::kLE, "prim.LE"},
        {ir::ExprKind::kGT, "prim.GT"},
        {ir::ExprKind::kGE, "prim.GE"},
        {ir::ExprKind::kAnd, "prim.And"},
        {ir::ExprKind::kOr, "prim.Or"}};
    if (const auto* n = e.as<ir::IntImmNode>()) return IntImm(n->value, n->dtype);
    if (const auto* n = e.as<ir::FloatImmNode>()) {
      int64_t ty = PrimType(n->dtype);
      return Add("ir.FloatImm", json{{"span", 0}, {"ty", ty}, {"value", n->value}});
    }
    if (const auto* n = e.as<ir::VarNode>()) return Var(n);
    if (const auto* n = e.as<ir::BinaryNode>()) {
      int64_t a = Expr(n->a);
      int64_t b = Expr(n->b);
      int64_t ty = PrimType(n->dtype);
      return Add(kBinary.at(n->kind), json{{"span", 0}, {"ty", ty}, {"a", a}, {"b", b}});
    }
    if (const auto* n = e.as<ir::NotNode>()) {
      int64_t a = Expr(n->a);
      int64_t ty = PrimType(n->dtype);
      return Add("prim.Not", json{{"span", 0}, {"ty", ty}, {"a", a}});
    }
    if (const auto* n = e.as<ir::SelectNode>()) {
      int64_t c = Expr(n->condition), t = Expr(n->true_value), f = Expr(n->false_value);
      int64_t ty = PrimType(n->dtype);
      return Add(
          "prim.Select",
          json{{"span", 0}, {"ty", ty}, {"condition", c}, {"true_value", t}, {"false_value", f}});
    }
    if (const auto* n = e.as<ir::CastNode>()) {
      int64_t v = Expr(n->value);
      int64_t ty = PrimType(n->dtype);
      return Add("prim.Cast", json{{"span", 0}, {"ty", ty}, {"value", v}});
    }
    if (const auto* n = e.as<ir::BufferLoadNode>()) {
      int64_t src = Buffer(n->buffer);
      std::vector<int64_t> idx;
      for (const auto& i : n->indices) idx.push_back(Expr(i));
      int64_t indices = Array(idx);
      int64_t ty = PrimType(n->dtype);
      return Add("ir.TensorLoad",
                 json{{"span", 0}, {"ty", ty}, {"source", src}, {"indices", indices}});
    }
    if (const auto* n = e.as<ir::CallNode>()) {
      std::string name = ir::CallOpName(n->op);
      int64_t op = Add("ir.Op", (n->op == ir::CallOp::kIfThenElse ? "prim." : "tirx.") + name);
      std::vector<int64_t> args;
      for (const auto& a : n->args) args.push_back(Expr(a));
      int64_t args_idx = Array(args);
      int64_t ty_args = Array({});
      int64_t ty = PrimType(n->dtype);
      return Add("ir.Call", json{{"span", 0},
                                 {"ty", ty},
                                 {"op", op},
                                 {"args", args_idx},
                                 {"attrs", 0},
                                 {"ty_args", ty_args}});
    }
    throw TvmImportError("cannot export expression kind " +
                         std::to_string(static_cast<int>(e->kind)) +
                         " to TVM (vector expressions have no TVM workload form)");
  }

  int64_t Annotations(const ir::Annotations& ann, bool tvm_keys) {
    std::vector<std::pair<int64_t, int64_t>> kv;
    for (const auto& [k, v] : ann) {
      std::string key = k;
      if (tvm_keys && key.rfind("tir.", 0) == 0) key = "tirx." + key.substr(4);
      int64_t key_idx = String(key);
      int64_t value;
      if (const auto* s = v.as<ir::StringImmNode>()) {
        value = String(s->value);
      } else if (const auto* i = v.as<ir::IntImmNode>(); i && i->dtype.is_bool()) {
        value = Add("bool", i->value != 0);
      } else {
        value = Expr(v);
      }
      kv.emplace_back(key_idx, value);
    }
    return Map(kv);
  }

  int64_t Range(const ir::Range& r) {
    int64_t min = Expr(r.min), extent = Expr(r.extent);
    return Add("ir.Range", json{{"min", min}, {"extent", extent}, {"span", 0}});
  }

  int64_t Regions(const std::vector<ir::BufferRegion>& regions) {
    std::vector<int64_t> out;
    for (const auto& br : regions) {
      int64_t ty = Add("tirx.BufferRegionType", json{{"span", 0}});
      int64_t src = Buffer(br.buffer);
      std::vector<int64_t> rs;
      for (const auto& r : br.region) rs.push_back(Range(r));
      int64_t region = Array(rs);
      out.push_back(Add("ir.TensorRegion",
                        json{{"span", 0}, {"ty", ty}, {"source", src}, {"region", region}}));
    }
    return Array(out);
  }

  int64_t Stmt(const ir::Stmt& s) {
    if (const auto* n = s.as<ir::SeqStmtNode>()) {
      std::vector<int64_t> seq;
      for (const auto& x : n->seq) seq.push_back(Stmt(x));
      int64_t arr = Array(seq);
      return Add("tirx.SeqStmt", json{{"span", 0}, {"seq", arr}});
    }
    if (const auto* n = s.as<ir::ForNode>()) {
      int64_t var = Var(n->loop_var.get());
      int64_t min = Expr(n->min), extent = Expr(n->extent);
      int64_t body = Stmt(n->body);
      int64_t binding = 0;
      if (n->for_kind == ir::ForKind::kThreadBinding) {
        int64_t tag = String(n->thread_tag);
        binding =
            Add("tirx.IterVar",
                json{{"dom", 0}, {"var", var}, {"iter_type", 1}, {"thread_tag", tag}, {"span", 0}});
      }
      int64_t ann = Annotations(n->annotations, false);
      return Add("tirx.For", json{{"span", 0},
                                  {"loop_var", var},
                                  {"min", min},
                                  {"extent", extent},
                                  {"kind", static_cast<int>(n->for_kind)},
                                  {"body", body},
                                  {"thread_binding", binding},
                                  {"annotations", ann},
                                  {"step", 0}});
    }
    if (const auto* n = s.as<ir::BufferStoreNode>()) {
      int64_t buf = Buffer(n->buffer);
      int64_t value = Expr(n->value);
      std::vector<int64_t> idx;
      for (const auto& i : n->indices) idx.push_back(Expr(i));
      int64_t indices = Array(idx);
      return Add("tirx.BufferStore",
                 json{{"span", 0}, {"buffer", buf}, {"value", value}, {"indices", indices}});
    }
    if (const auto* n = s.as<ir::IfThenElseNode>()) {
      int64_t c = Expr(n->condition);
      int64_t t = Stmt(n->then_case);
      int64_t f = n->else_case.defined() ? Stmt(n->else_case) : 0;
      return Add("tirx.IfThenElse",
                 json{{"span", 0}, {"condition", c}, {"then_case", t}, {"else_case", f}});
    }
    if (const auto* n = s.as<ir::EvaluateNode>()) {
      int64_t v = Expr(n->value);
      return Add("tirx.Evaluate", json{{"span", 0}, {"value", v}});
    }
    if (const auto* n = s.as<ir::BlockRealizeNode>()) return Realize(*n);
    throw TvmImportError("cannot export this statement kind to TVM");
  }

  int64_t Realize(const ir::BlockRealizeNode& n) {
    const ir::BlockNode& b = *n.block.get();
    std::vector<int64_t> values;
    for (const auto& v : n.iter_values) values.push_back(Expr(v));
    int64_t values_idx = Array(values);
    int64_t pred = Expr(n.predicate);
    std::vector<int64_t> ivs;
    for (const auto& iv : b.iter_vars) {
      int64_t dom = Range(iv.dom);
      int64_t var = Var(iv.var.get());
      int64_t tag = String("");
      // Kiln's IterType order (ir/stmt.h) against TVM's IterVarType values.
      static const int kTvmIterType[] = {0, 2, 3, 4};
      ivs.push_back(
          Add("tirx.IterVar", json{{"dom", dom},
                                   {"var", var},
                                   {"iter_type", kTvmIterType[static_cast<int>(iv.iter_type)]},
                                   {"thread_tag", tag},
                                   {"span", 0}}));
    }
    int64_t ivs_idx = Array(ivs);
    int64_t reads = Regions(b.reads);
    int64_t writes = Regions(b.writes);
    int64_t name = String(b.name);
    std::vector<int64_t> allocs;
    for (const auto& a : b.alloc_buffers) allocs.push_back(Buffer(a));
    int64_t allocs_idx = Array(allocs);
    int64_t matches = Array({});
    int64_t ann = Annotations(b.annotations, false);
    int64_t init = b.init ? Stmt(*b.init) : 0;
    int64_t body = Stmt(b.body);
    int64_t block = Add("s_tir.SBlock", json{{"span", 0},
                                             {"iter_vars", ivs_idx},
                                             {"reads", reads},
                                             {"writes", writes},
                                             {"name_hint", name},
                                             {"alloc_buffers", allocs_idx},
                                             {"match_buffers", matches},
                                             {"annotations", ann},
                                             {"init", init},
                                             {"body", body}});
    return Add(
        "s_tir.SBlockRealize",
        json{{"span", 0}, {"iter_values", values_idx}, {"predicate", pred}, {"block", block}});
  }

  // relax.FuncType of the function: one TensorType per buffer parameter,
  // with int64 shapes, returning an empty tuple.
  int64_t FuncType(const ir::PrimFunc& f) {
    std::vector<int64_t> params;
    for (const auto& p : f.params) {
      std::vector<int64_t> dims;
      for (const auto& d : p->shape) {
        int64_t v = 0;
        if (!ir::AsConstInt(d, &v)) throw TvmImportError("cannot export a symbolic shape to TVM");
        dims.push_back(IntImm(v, ir::DataType::Int64()));
      }
      int64_t values = Array(dims);
      int64_t ndim = static_cast<int64_t>(dims.size());
      int64_t shape_ty =
          Add("relax.ShapeType", json{{"span", 0}, {"values", values}, {"ndim", ndim}});
      int64_t shape =
          Add("relax.expr.ShapeExpr", json{{"span", 0}, {"ty", shape_ty}, {"values", values}});
      int64_t dtype = PrimType(p->dtype);
      params.push_back(Add(
          "relax.TensorType",
          json{{"span", 0}, {"shape", shape}, {"dtype", dtype}, {"vdevice", 0}, {"ndim", ndim}}));
    }
    int64_t params_idx = Array(params);
    int64_t fields = Array({});
    int64_t ret = Add("ir.TupleType", json{{"span", 0}, {"fields", fields}});
    return Add("relax.FuncType", json{{"span", 0},
                                      {"params", params_idx},
                                      {"ret", ret},
                                      {"derive_func", 0},
                                      {"purity", false}});
  }

  int64_t Module(const ir::PrimFunc& f) {
    int64_t gv_ty = Add("ir.Type", json{{"span", 0}});
    int64_t fname = String(f.name);
    int64_t gv = Add("ir.GlobalVar", json{{"span", 0}, {"ty", gv_ty}, {"name_hint", fname}});
    int64_t fty = FuncType(f);
    // TVM's bookkeeping attributes (database/tvm_graph.cc drops them on
    // import): the symbol name and the SBlock marker.
    ir::Annotations attrs = f.attrs;
    int64_t dict = Annotations(attrs, true);
    {
      json& d = nodes_[static_cast<size_t>(dict)]["data"];
      int64_t sym_key = String("global_symbol");
      int64_t s_key = String("s_tir");
      int64_t yes = Add("bool", true);
      d.push_back(sym_key);
      d.push_back(fname);
      d.push_back(s_key);
      d.push_back(yes);
    }
    int64_t attrs_idx = Add("ir.DictAttrs", json{{"__dict__", dict}});
    std::vector<int64_t> params;
    for (const auto& p : f.params) params.push_back(Buffer(p));
    int64_t params_idx = Array(params);
    int64_t fields = Array({});
    int64_t ret = Add("ir.TupleType", json{{"span", 0}, {"fields", fields}});
    int64_t body = Stmt(f.body);
    int64_t func = Add("tirx.PrimFunc", json{{"span", 0},
                                             {"ty", fty},
                                             {"attrs", attrs_idx},
                                             {"params", params_idx},
                                             {"ret_type", ret},
                                             {"body", body}});
    int64_t functions = Map({{gv, func}});
    int64_t gv_map = Map({{fname, gv}});
    int64_t sm_map = Map({});
    int64_t source_map = Add("ir.SourceMap", json{{"source_map", sm_map}});
    int64_t mod_attrs_map = Map({});
    int64_t mod_attrs = Add("ir.DictAttrs", json{{"__dict__", mod_attrs_map}});
    int64_t infos = Map({});
    return Add("ir.IRModule", json{{"functions", functions},
                                   {"global_var_map_", gv_map},
                                   {"source_map", source_map},
                                   {"attrs", mod_attrs},
                                   {"global_infos", infos}});
  }

 private:
  json nodes_ = json::array();
  std::unordered_map<const ir::VarNode*, int64_t> vars_;
  std::unordered_map<const ir::BufferNode*, int64_t> buffers_;
};

std::string WorkloadBlob(const json& graph) {
  std::string text = graph.dump();
  std::string bytes(8, '\0');
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i)
    bytes[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return EncodeBase64(bytes + text);
}

}  // namespace

json PrimFuncToTvmGraph(const ir::PrimFunc& func) {
  GraphWriter w;
  int64_t root = w.Module(func);
  return w.Finish(root);
}

json TraceToTvm(const json& kiln_trace) {
  json out = kiln_trace;
  if (!out.is_array() || out.empty() || !out[0].is_array()) return out;
  for (json& inst : out[0]) {
    if (inst.is_array() && !inst.empty() && inst[0] == "GetBlock") inst[0] = "GetSBlock";
  }
  return out;
}

TvmExportReport ExportTvmDatabase(const Database& db, std::ostream& workloads,
                                  std::ostream& records) {
  TvmExportReport report;
  std::unordered_map<WorkloadId, int64_t> line_of;
  db.ForEachRecord([&](WorkloadId w, const TuningRecord& r) {
    auto it = line_of.find(w);
    if (it == line_of.end()) {
      ir::PrimFunc f = ir::ParseFunc(db.WorkloadText(w), "workload " + std::to_string(w));
      // TVM recomputes the hash on load; the decimal form of Kiln's is a
      // placeholder of the right shape.
      json line =
          json::array({std::to_string(ir::StructuralHash(f)), WorkloadBlob(PrimFuncToTvmGraph(f))});
      workloads << line.dump() << "\n";
      it = line_of.emplace(w, report.workloads++).first;
    }
    json run_secs = json::array();
    if (r.status == kStatusOk) {
      for (double s : r.run_seconds) run_secs.push_back(s);
    }
    if (run_secs.empty()) run_secs.push_back(kTvmFailedSeconds);
    json args = json::array();
    for (const ArgInfo& a : r.args) args.push_back(json::array({"TENSOR", a.dtype, a.shape}));
    json target = TargetToTvm(ir::Target::Parse(r.target));
    json rec = json::array(
        {it->second, json::array({TraceToTvm(json::parse(r.trace_json)), run_secs, target, args})});
    records << rec.dump() << "\n";
    ++report.records;
  });
  return report;
}

}  // namespace kiln::database
