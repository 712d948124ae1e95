// split: one loop becomes a nest of loops whose extents are the factors.
//
// The old loop variable is replaced by i_0 * (f1 * ... ) + ... + i_{n-1} in
// everything under the loop; when the factors' product exceeds the extent the
// blocks directly below get the predicate `<substituted> < extent` so that no
// extra iteration runs (unless predication is disabled by the caller).
#include <string>

#include "ir/arith/analyzer.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/text/printer.h"
#include "ir/schedule/analysis.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/schedule.h"
#include "ir/substitute.h"

namespace kiln::ir {

namespace {

constexpr const char* kPrimitive = "split";

// Conjoins `pred` to the predicate of each BlockRealize directly under a
// statement (not those nested inside blocks).
class PredicateAppender : public IRMutator {
 public:
  explicit PredicateAppender(Expr pred) : pred_(std::move(pred)) {}

 protected:
  Stmt VisitBlockRealize(const Stmt&, const BlockRealizeNode* op) override {
    auto n = MakeNode<BlockRealizeNode>(*op);
    n->predicate = !op->predicate.defined() || IsConstInt(op->predicate, 1)
                       ? pred_
                       : And(op->predicate, pred_);
    return Stmt(std::move(n));
  }

 private:
  Expr pred_;
};

// The first statement under `s` that is not inside a block and does work
// (a store or an evaluate), or null: such statements cannot carry a block
// predicate, so an imperfect split could not guard them.
const StmtNode* UnguardableWork(const Stmt& s) {
  if (!s.defined()) return nullptr;
  switch (s.kind()) {
    case StmtKind::kFor:
      return UnguardableWork(s.as<ForNode>()->body);
    case StmtKind::kBlockRealize:
      return nullptr;
    case StmtKind::kSeqStmt:
      for (const Stmt& c : s.as<SeqStmtNode>()->seq) {
        if (const StmtNode* w = UnguardableWork(c)) return w;
      }
      return nullptr;
    case StmtKind::kIfThenElse: {
      const auto* n = s.as<IfThenElseNode>();
      if (const StmtNode* w = UnguardableWork(n->then_case)) return w;
      return UnguardableWork(n->else_case);
    }
    default:
      return s.get();
  }
}

// Whether a >= b for small non-negative constants, decided without the
// analyzer (which would decide it alike); false when either is not one.
bool ConstGE(const Expr& a, const Expr& b) {
  int64_t x, y;
  constexpr int64_t kSmall = int64_t{1} << 30;
  return AsConstInt(a, &x) && AsConstInt(b, &y) && a.dtype() == b.dtype() && x >= 0 && y >= 0 &&
         x < kSmall && y < kSmall && x >= y;
}

}  // namespace

std::vector<LoopRV> Schedule::Split(LoopRV loop_rv, const std::vector<Factor>& factors,
                                    bool preserve_unit_iters, bool disable_predication) {
  StmtPath path = PathOf(loop_rv);
  const ForNode& loop = *path.back().as<ForNode>();
  const std::string name = loop.loop_var.name();
  const DataType dtype = loop.loop_var.dtype();
  if (factors.empty()) {
    throw ScheduleError(kPrimitive, "no factors given for loop " + name);
  }
  if (!loop.annotations.empty() || loop.for_kind == ForKind::kThreadBinding) {
    throw ScheduleError(kPrimitive, "loop " + name +
                                        " has annotations or a thread binding; split it before "
                                        "annotating or binding it");
  }
  arith::Analyzer an;
  for (const auto& [v, r] : AllLoopsAbove(path)) an.Bind(v, r);
  // A zero minimum (the usual case) needs no proof; the proof agrees.
  if (!IsConstInt(loop.min, 0) && !an.CanProve(EQ(loop.min, IntImm(0, loop.min.dtype())))) {
    throw ScheduleError(kPrimitive, "loop " + name + " starts at " + ToText(loop.min) +
                                        "; only loops starting at 0 can be split");
  }

  // Resolve the factors: constants and sampled values; at most one inferred.
  int infer_index = -1;
  std::vector<Expr> values(factors.size());
  Expr known_product = IntImm(1, dtype);
  for (size_t i = 0; i < factors.size(); ++i) {
    int64_t v = 0;
    if (std::holds_alternative<std::monostate>(factors[i])) {
      if (infer_index >= 0) {
        throw ScheduleError(kPrimitive, "only one factor can be None (inferred); factors " +
                                            std::to_string(infer_index) + " and " +
                                            std::to_string(i) + " both are");
      }
      infer_index = static_cast<int>(i);
      continue;
    }
    v = std::holds_alternative<int64_t>(factors[i]) ? std::get<int64_t>(factors[i])
                                                    : Get(std::get<ExprRV>(factors[i]));
    if (v == -1) {
      if (infer_index >= 0) {
        throw ScheduleError(kPrimitive, "only one factor can be None (inferred); factors " +
                                            std::to_string(infer_index) + " and " +
                                            std::to_string(i) + " both are");
      }
      infer_index = static_cast<int>(i);
      continue;
    }
    if (v <= 0) {
      throw ScheduleError(kPrimitive, "factor " + std::to_string(i) + " of loop " + name + " is " +
                                          std::to_string(v) + "; factors must be positive");
    }
    values[i] = IntImm(v, dtype);
    known_product = an.Simplify(known_product * values[i]);
  }
  Expr extent = an.Simplify(loop.extent);
  if (infer_index >= 0) {
    values[infer_index] = an.Simplify(FloorDiv(extent + known_product - 1, known_product));
  } else if (!ConstGE(known_product, extent) && !an.CanProve(GE(known_product, extent))) {
    throw ScheduleError(kPrimitive, "the product of factors (" + ToText(known_product) +
                                        ") is less than the extent of loop " + name + " (" +
                                        ToText(extent) + ")");
  }

  // The new loop variables and the value that replaces the old one.
  std::vector<Var> vars;
  vars.reserve(values.size());
  Expr substitute;
  for (size_t i = 0; i < values.size(); ++i) {
    Var v(name + "_" + std::to_string(i), dtype);
    vars.push_back(v);
    an.Bind(v, Range{IntImm(0, dtype), values[i]});
    // A unit factor contributes nothing unless unit iterators are preserved.
    if (!preserve_unit_iters && IsConstInt(values[i], 1)) continue;
    substitute = substitute.defined() ? substitute * values[i] + v : Expr(v);
  }
  if (!substitute.defined()) substitute = IntImm(0, dtype);

  Stmt body = SubstituteLoopVars(loop.body, VarMap{{loop.loop_var.get(), substitute}});
  Expr predicate = LT(substitute, extent);
  if (!disable_predication && !an.CanProve(predicate)) {
    if (UnguardableWork(loop.body) != nullptr) {
      Expr product = IntImm(1, dtype);
      for (const Expr& v : values) product = product * v;
      throw ScheduleError(kPrimitive, "the factors of loop " + name + " (product " +
                                          ToText(an.Simplify(product)) +
                                          ") do not divide its extent " + ToText(extent) +
                                          ", and statements outside any block under it could "
                                          "not be guarded by a predicate");
    }
    PredicateAppender appender(predicate);
    body = appender.VisitStmt(body);
  }
  for (size_t i = vars.size(); i-- > 0;) {
    body = For(vars[i], IntImm(0, dtype), values[i], ForKind::kSerial, body);
  }
  std::vector<std::string> affine;
  body = SimplifyBlockBindings(body, LoopDomainOf(path), preserve_unit_iters, &affine);
  SetBody(ReplaceAlongPath(path, body));
  // The parallel and vectorize checks after a fuse (the postprocessor's
  // order) would prove these bindings affine again.
  for (std::string& name : affine) NoteFact(ScheduleFact::AffineBinding(std::move(name)));

  std::vector<LoopRV> out;
  std::vector<RVRef> refs;
  out.reserve(vars.size());
  refs.reserve(vars.size());
  for (const Var& v : vars) {
    out.push_back(NewLoopRV(v));
    refs.push_back(out.back().ref());
  }
  std::vector<InstArg> inputs;
  inputs.reserve(factors.size() + 1);
  inputs.push_back(InstArg::Of(loop_rv.ref()));
  for (const Factor& f : factors) {
    if (std::holds_alternative<std::monostate>(f)) {
      inputs.push_back(InstArg::None());
    } else if (std::holds_alternative<int64_t>(f)) {
      inputs.push_back(InstArg::Int(std::get<int64_t>(f)));
    } else {
      inputs.push_back(InstArg::Of(std::get<ExprRV>(f).ref()));
    }
  }
  Record(instruction_kinds::Split().name, std::move(inputs),
         nlohmann::json::array({preserve_unit_iters ? 1 : 0, disable_predication ? 1 : 0}), refs);
  return out;
}

namespace instruction_kinds {

const InstructionKind& Split() {
  static const InstructionKind k = kind_definition::DefineKind(
      "Split", {},
      [](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        if (a.size() < 2) a.Fail("expected a loop and at least one factor");
        a.ExpectAttrs(2);
        std::vector<Factor> factors;
        for (size_t i = 1; i < a.size(); ++i) {
          const InstArg& f = a.inputs()[i];
          switch (f.kind) {
            case InstArg::Kind::kNone:
              factors.emplace_back(std::monostate{});
              break;
            case InstArg::Kind::kInt:
              factors.emplace_back(f.int_value);
              break;
            default:
              factors.emplace_back(a.Expr(i));
              break;
          }
        }
        std::vector<RVRef> out;
        for (LoopRV l : sch.Split(a.Loop(0), factors, a.AttrBool(0), a.AttrBool(1))) {
          out.push_back(l.ref());
        }
        return out;
      },
      [](kind_definition::PyCall& py) {
        std::vector<std::string> factors(py.in.begin() + 1, py.in.end());
        py.Arg("loop", py.in[0]).Arg("factors", kind_definition::PyList(factors));
        py.Arg("preserve_unit_iters", kind_definition::PyBool(py.AttrBool(0)));
        py.Arg("disable_predication", kind_definition::PyBool(py.AttrBool(1)));
      });
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
