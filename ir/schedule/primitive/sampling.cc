// sample_categorical and sample_perfect_tile (sample_compute_location lives
// with compute_at, whose legality rules it shares).
#include <algorithm>

#include "ir/op.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/schedule.h"

namespace kiln::ir {

namespace {

std::vector<std::pair<int64_t, int>> Factorize(int64_t n) {
  std::vector<std::pair<int64_t, int>> out;
  for (int64_t p = 2; p * p <= n; ++p) {
    int e = 0;
    while (n % p == 0) {
      n /= p;
      ++e;
    }
    if (e) out.emplace_back(p, e);
  }
  if (n > 1) out.emplace_back(n, 1);
  return out;
}

// Draws n factors (outer to inner) whose product is `extent`, uniformly over
// all ordered factorizations, with the innermost at most max_innermost
// (max_innermost <= 0: no limit). Each prime's exponent is spread over the n
// slots as a uniform composition (stars and bars); the primes are
// independent, so the product is uniform over factorizations.
std::vector<int64_t> DrawPerfectTile(RandomEngine& rng, int64_t extent, int n,
                                     int64_t max_innermost) {
  const auto primes = Factorize(extent);
  for (int attempt = 0; attempt < 10000; ++attempt) {
    std::vector<int64_t> tile(n, 1);
    for (const auto& [p, e] : primes) {
      std::vector<int64_t> bars = rng.SampleWithoutReplacement(e + n - 1, n - 1);
      std::sort(bars.begin(), bars.end());
      int64_t prev = -1;
      for (int slot = 0; slot < n; ++slot) {
        int64_t next = slot < n - 1 ? bars[slot] : e + n - 1;
        for (int64_t k = 0; k < next - prev - 1; ++k) tile[slot] *= p;
        prev = next;
      }
    }
    if (max_innermost <= 0 || tile[n - 1] <= max_innermost) return tile;
  }
  // Practically unreachable (innermost 1 always qualifies and has positive
  // probability); keep the result well-defined anyway.
  std::vector<int64_t> tile(n, 1);
  tile[0] = extent;
  return tile;
}

// Makes a replayed tile fit `extent`: inner to outer, a factor that does not
// divide what is left becomes what is left; the outermost takes the rest.
std::vector<int64_t> RepairTile(std::vector<int64_t> tile, int64_t extent) {
  int64_t product = 1;
  bool valid = true;
  for (int64_t f : tile) {
    if (f <= 0) valid = false;
    product *= std::max<int64_t>(f, 1);
  }
  if (valid && product == extent) return tile;
  int64_t rest = extent;
  for (size_t i = tile.size(); i-- > 1;) {
    if (tile[i] <= 0 || rest % tile[i] != 0) tile[i] = rest;
    rest /= tile[i];
  }
  tile[0] = rest;
  return tile;
}

}  // namespace

ExprRV Schedule::SampleCategorical(const std::vector<int64_t>& candidates,
                                   const std::vector<double>& probs,
                                   std::optional<int64_t> decision) {
  if (candidates.empty()) throw ScheduleError("sample_categorical", "no candidates");
  if (candidates.size() != probs.size()) {
    throw ScheduleError("sample_categorical",
                        std::to_string(candidates.size()) + " candidates but " +
                            std::to_string(probs.size()) + " probabilities");
  }
  int64_t index;
  if (decision) {
    if (*decision < 0 || *decision >= static_cast<int64_t>(candidates.size())) {
      throw ScheduleError("sample_categorical",
                          "decision " + std::to_string(*decision) + " is out of range for " +
                              std::to_string(candidates.size()) + " candidates");
    }
    index = *decision;
  } else {
    try {
      index = rng_.SampleCategorical(probs);
    } catch (const std::invalid_argument& e) {
      throw ScheduleError("sample_categorical", std::string("bad probabilities: ") + e.what());
    }
  }
  ExprRV out = NewExprRV(candidates[index]);
  Record(instruction_kinds::SampleCategorical().name, {},
         nlohmann::json::array({candidates, probs}), {out.ref()}, nlohmann::json(index));
  return out;
}

std::vector<ExprRV> Schedule::SamplePerfectTile(LoopRV loop, int n, int max_innermost_factor,
                                                std::optional<std::vector<int64_t>> decision) {
  const ForNode& f = Get(loop);
  int64_t extent;
  if (!AsConstInt(f.extent, &extent)) {
    throw ScheduleError("sample_perfect_tile",
                        "loop " + f.loop_var.name() + " has a non-constant extent");
  }
  if (n < 1 || n > 64) {
    throw ScheduleError("sample_perfect_tile", "n must be in [1, 64], got " + std::to_string(n));
  }
  if (extent < 1) {
    throw ScheduleError("sample_perfect_tile",
                        "loop " + f.loop_var.name() + " has extent " + std::to_string(extent));
  }
  std::vector<int64_t> tile;
  if (decision) {
    if (static_cast<int>(decision->size()) != n) {
      throw ScheduleError("sample_perfect_tile",
                          "decision has " + std::to_string(decision->size()) +
                              " factors, expected " + std::to_string(n));
    }
    tile = RepairTile(*decision, extent);
  } else {
    tile = DrawPerfectTile(rng_, extent, n, max_innermost_factor);
  }
  std::vector<ExprRV> outs;
  std::vector<RVRef> refs;
  outs.reserve(tile.size());
  refs.reserve(tile.size());
  for (int64_t t : tile) {
    outs.push_back(NewExprRV(t));
    refs.push_back(outs.back().ref());
  }
  Record(instruction_kinds::SamplePerfectTile().name, {InstArg::Of(loop.ref())},
         nlohmann::json::array({n, max_innermost_factor}), refs, nlohmann::json(tile));
  return outs;
}

namespace instruction_kinds {

const InstructionKind& SampleCategorical() {
  static const InstructionKind k = kind_definition::DefineKind(
      "SampleCategorical", {/*is_pure=*/true, /*has_decision=*/true},
      [](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(0);
        a.ExpectAttrs(2);
        std::optional<int64_t> d;
        if (a.decision()) d = a.DecisionInt();
        return {sch.SampleCategorical(a.AttrInts(0), a.AttrFloats(1), d).ref()};
      },
      [](kind_definition::PyCall& py) {
        py.Arg("candidates", kind_definition::PyValue(py.attrs[0]))
            .Arg("probs", kind_definition::PyValue(py.attrs[1]));
        if (py.decision) py.Arg("decision", kind_definition::PyValue(*py.decision));
      });
  return k;
}

const InstructionKind& SamplePerfectTile() {
  static const InstructionKind k = kind_definition::DefineKind(
      "SamplePerfectTile", {/*is_pure=*/true, /*has_decision=*/true},
      [](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(1);
        a.ExpectAttrs(2);
        int64_t n = a.AttrInt(0);
        int64_t max_inner = a.AttrInt(1);
        if (n < 1 || n > 64) a.Fail("n must be in [1, 64]");
        if (max_inner < -1 || max_inner > (int64_t{1} << 31)) {
          a.Fail("max_innermost_factor is out of range");
        }
        std::optional<std::vector<int64_t>> d;
        if (a.decision()) d = a.DecisionInts();
        std::vector<RVRef> out;
        for (ExprRV v : sch.SamplePerfectTile(a.Loop(0), static_cast<int>(n),
                                              static_cast<int>(max_inner), d)) {
          out.push_back(v.ref());
        }
        return out;
      },
      [](kind_definition::PyCall& py) {
        py.Arg("loop", py.in[0]).Arg("n", py.attrs[0].dump());
        py.Arg("max_innermost_factor", py.attrs[1].dump());
        if (py.decision) py.Arg("decision", kind_definition::PyValue(*py.decision));
      });
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
