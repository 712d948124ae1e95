#include "ir/schedule/index_map.h"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "ir/arith/int_set.h"
#include "ir/arith/iter_map.h"
#include "ir/error.h"
#include "ir/op.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/substitute.h"

namespace kiln::ir {

namespace {

arith::IntSetMap BoxDomain(const std::vector<Var>& vars, const std::vector<Expr>& shape,
                           arith::Analyzer* an) {
  arith::IntSetMap dom;
  for (size_t k = 0; k < vars.size(); ++k) {
    dom[vars[k].get()] =
        arith::IntervalSet::FromRange(Range{IntImm(0, shape[k].dtype()), shape[k]}, an);
  }
  return dom;
}

}  // namespace

IndexMap IndexMap::FromText(std::string_view text) {
  ParsedLambda l = ParseLambda(text, "<index map>");
  return IndexMap{std::move(l.params), std::move(l.body)};
}

std::string IndexMap::ToText() const {
  std::string out = "lambda ";
  for (size_t k = 0; k < initial_indices.size(); ++k) {
    out += (k ? ", " : "") + initial_indices[k].name();
  }
  out += ": (";
  for (size_t k = 0; k < final_indices.size(); ++k) {
    out += (k ? ", " : "") + ir::ToText(final_indices[k]);
  }
  return out + (final_indices.size() == 1 ? ",)" : ")");
}

std::vector<Expr> IndexMap::Apply(const std::vector<Expr>& indices,
                                  arith::Analyzer* analyzer) const {
  if (indices.size() != initial_indices.size()) {
    throw IRError("index map " + ToText() + " takes " + std::to_string(initial_indices.size()) +
                  " indices, got " + std::to_string(indices.size()));
  }
  VarMap map;
  for (size_t k = 0; k < indices.size(); ++k) map[initial_indices[k].get()] = indices[k];
  std::vector<Expr> out;
  for (const Expr& e : final_indices) out.push_back(analyzer->Simplify(Substitute(e, map)));
  return out;
}

std::vector<Expr> IndexMap::MapShape(const std::vector<Expr>& shape,
                                     arith::Analyzer* analyzer) const {
  if (shape.size() != initial_indices.size()) {
    throw IRError("index map " + ToText() + " takes " + std::to_string(initial_indices.size()) +
                  " indices, but the shape has " + std::to_string(shape.size()) + " dimensions");
  }
  arith::IntSetMap dom = BoxDomain(initial_indices, shape, analyzer);
  std::vector<Expr> out;
  for (size_t j = 0; j < final_indices.size(); ++j) {
    arith::IntervalSet s = arith::EvalSet(final_indices[j], dom, analyzer);
    if (!s.is_bounded()) {
      throw IRError("index map " + ToText() + ": result " + std::to_string(j) +
                    " is unbounded over the shape");
    }
    out.push_back(analyzer->Simplify(s.max - s.min + 1));
  }
  return out;
}

std::string IndexMap::NotBijectiveReason(const std::vector<Expr>& shape,
                                         arith::Analyzer* analyzer) const {
  if (shape.size() != initial_indices.size()) {
    return "it takes " + std::to_string(initial_indices.size()) + " indices, but the shape has " +
           std::to_string(shape.size()) + " dimensions";
  }
  std::vector<std::pair<Var, Range>> iters;
  int64_t before = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    int64_t extent = 0;
    if (!AsConstInt(shape[k], &extent)) {
      return "dimension " + std::to_string(k) + " has the non-constant extent " +
             ir::ToText(shape[k]);
    }
    before *= extent;
    iters.emplace_back(initial_indices[k], Range{IntImm(0, shape[k].dtype()), shape[k]});
  }
  arith::IterMapResult r = arith::DetectIterMap(final_indices, iters, BoolImm(true),
                                                arith::IterMapLevel::kBijective, analyzer);
  if (!r.ok()) return "it is not a bijective affine map: " + r.errors.front();
  for (size_t j = 0; j < r.indices.size(); ++j) {
    const Expr& base = r.indices[j].base;
    if (base.defined() && !IsConstInt(analyzer->Simplify(base), 0)) {
      return "result " + std::to_string(j) + " is offset by " + ir::ToText(base);
    }
  }
  int64_t after = 1;
  for (const Expr& e : MapShape(shape, analyzer)) {
    int64_t extent = 0;
    if (!AsConstInt(e, &extent)) return "the new shape is not constant";
    after *= extent;
  }
  if (after != before) {
    return "the new shape holds " + std::to_string(after) + " elements, the old one " +
           std::to_string(before) + " (the map would introduce padding)";
  }
  return "";
}

IndexMap IndexMap::Inverse(const std::vector<Expr>& shape, arith::Analyzer* analyzer) const {
  std::string why = NotBijectiveReason(shape, analyzer);
  if (!why.empty()) throw IRError("index map " + ToText() + " has no inverse: " + why);
  std::vector<std::pair<Var, Range>> iters;
  for (size_t k = 0; k < shape.size(); ++k) {
    iters.emplace_back(initial_indices[k], Range{IntImm(0, shape[k].dtype()), shape[k]});
  }
  arith::IterMapResult r = arith::DetectIterMap(final_indices, iters, BoolImm(true),
                                                arith::IterMapLevel::kBijective, analyzer);
  std::vector<Expr> new_shape = MapShape(shape, analyzer);
  // The new indices' ranges are facts about the inverse only: keep them out
  // of the caller's analyzer.
  arith::Analyzer local = *analyzer;
  analyzer = &local;

  IndexMap inv;
  for (size_t j = 0; j < final_indices.size(); ++j) {
    Var y("v" + std::to_string(j), final_indices[j].dtype());
    analyzer->Bind(y, Range{IntImm(0, y.dtype()), new_shape[j]});
    inv.initial_indices.push_back(y);
  }
  // Each split reads some digits of a mark's value; collecting the digits of
  // every mark, outputs first and fused marks before their parts, gives the
  // value of every input iterator.
  struct Piece {
    int64_t lower_factor;
    Expr value;
  };
  std::unordered_map<const arith::IterMarkNode*, std::vector<Piece>> pieces;
  std::vector<arith::IterMark> order;
  std::unordered_set<const arith::IterMarkNode*> seen;
  std::function<void(const arith::IterMark&)> visit = [&](const arith::IterMark& m) {
    if (!seen.insert(m.get()).second) return;
    if (!m->var.defined()) {
      for (const auto& a : m->sum.args) visit(a.source);
    }
    order.push_back(m);
  };
  for (size_t j = 0; j < r.indices.size(); ++j) {
    const arith::IterSumExpr& sum = r.indices[j];
    Expr rest = inv.initial_indices[j];
    if (sum.base.defined()) rest = rest - sum.base;
    for (const auto& a : sum.args) {
      pieces[a.source.get()].push_back(
          {a.lower_factor, FloorMod(FloorDiv(rest, IntImm(a.scale, rest.dtype())),
                                    IntImm(a.extent, rest.dtype()))});
      visit(a.source);
    }
  }
  std::reverse(order.begin(), order.end());
  VarMap solved;
  for (const auto& m : order) {
    Expr value;
    for (const Piece& p : pieces[m.get()]) {
      Expr term = p.lower_factor == 1 ? p.value : p.value * IntImm(p.lower_factor, p.value.dtype());
      value = value.defined() ? value + term : term;
    }
    if (m->var.defined()) {
      if (m->var_min.defined()) value = value + m->var_min;
      solved[m->var.get()] = value;
      continue;
    }
    for (const auto& a : m->sum.args) {
      pieces[a.source.get()].push_back(
          {a.lower_factor, FloorMod(FloorDiv(value, IntImm(a.scale, value.dtype())),
                                    IntImm(a.extent, value.dtype()))});
    }
  }
  for (const Var& x : initial_indices) {
    auto it = solved.find(x.get());
    // A unit-extent index takes no digits.
    inv.final_indices.push_back(it == solved.end() ? IntImm(0, x.dtype())
                                                   : analyzer->Simplify(it->second));
  }
  return inv;
}

}  // namespace kiln::ir
