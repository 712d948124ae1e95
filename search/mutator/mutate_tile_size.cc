// MutateTileSize (TVM's, docs/ARCHITECTURE.md §6): pick one SamplePerfectTile decision
// with at least two factors and a product of at least 2, or one
// SampleCategorical that feeds a cooperative-fetch annotation (GPU), uniformly
// over both. A tile moves a divisor d > 1 of one factor x to another factor
// y (tiles[x] /= d, tiles[y] *= d), so the product, the loop extent, is kept;
// the innermost factor stays within the sampler's max_innermost_factor. A
// categorical is redrawn from its probabilities without its current value.
#include <algorithm>

#include "search/mutator.h"
#include "search/mutator/redraw_categorical.h"

namespace kiln::search {
namespace {

constexpr char kCooperativeFetch[] = "meta_schedule.cooperative_fetch";

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t i = 1; i * i <= n; ++i) {
    if (n % i != 0) continue;
    out.push_back(i);
    if (i * i != n) out.push_back(n / i);
  }
  std::sort(out.begin(), out.end());
  return out;
}

class MutateTileSize : public Mutator {
 public:
  std::string Name() const override { return "MutateTileSize"; }

  std::optional<ir::Trace> Apply(const ir::Trace& trace, ir::RandomEngine& rng,
                                 std::string* why) const override {
    const size_t end = trace.PostprocIndex();
    std::vector<size_t> tiles, categoricals;
    std::vector<ir::RVRef> fetched;
    for (size_t i = 0; i < end; ++i) {
      const ir::Instruction& inst = trace.insts()[i];
      if (inst.kind == "Annotate" && inst.attrs.size() == 1 && inst.attrs[0] == kCooperativeFetch &&
          inst.inputs.size() == 2 && inst.inputs[1].kind == ir::InstArg::Kind::kRV) {
        fetched.push_back(inst.inputs[1].rv);
      }
    }
    for (size_t i = 0; i < end; ++i) {
      const ir::Instruction& inst = trace.insts()[i];
      std::optional<nlohmann::json> d = trace.GetDecision(i);
      if (!d) continue;
      if (inst.kind == "SamplePerfectTile") {
        std::vector<int64_t> t = d->get<std::vector<int64_t>>();
        int64_t product = 1;
        for (int64_t f : t) product *= f;
        if (t.size() >= 2 && product >= 2) tiles.push_back(i);
      } else if (inst.kind == "SampleCategorical" && inst.outputs.size() == 1 &&
                 std::find(fetched.begin(), fetched.end(), inst.outputs[0]) != fetched.end() &&
                 inst.attrs.size() == 2 && inst.attrs[1].size() > 1) {
        categoricals.push_back(i);
      }
    }
    const int64_t n = static_cast<int64_t>(tiles.size() + categoricals.size());
    if (n == 0) {
      *why = "no tile decision with two or more factors and a product of at least 2";
      return std::nullopt;
    }
    const int64_t pick = rng.SampleInt(0, n);
    if (pick < static_cast<int64_t>(tiles.size())) return MutateTile(trace, tiles[pick], rng, why);
    return RedrawCategorical(trace, categoricals[pick - tiles.size()], rng,
                             "value of the categorical", why);
  }

 private:
  static std::optional<ir::Trace> MutateTile(const ir::Trace& trace, size_t index,
                                             ir::RandomEngine& rng, std::string* why) {
    std::vector<int64_t> tiles = trace.GetDecision(index)->get<std::vector<int64_t>>();
    const int64_t max_innermost = trace.insts()[index].attrs[1].get<int64_t>();
    const int64_t n = static_cast<int64_t>(tiles.size());
    // TVM retries until a move fits; a move into the innermost factor can be
    // impossible for every source, so bound the tries.
    for (int attempt = 0; attempt < 64; ++attempt) {
      const int64_t x = rng.SampleInt(0, n);
      if (tiles[x] <= 1) continue;
      int64_t y = rng.SampleInt(0, n - 1);
      if (y >= x) ++y;
      const std::vector<int64_t> divisors = Divisors(tiles[x]);  // [1, ..., tiles[x]]
      int64_t d;
      if (y != n - 1 || max_innermost <= 0) {
        d = divisors[rng.SampleInt(1, static_cast<int64_t>(divisors.size()))];
      } else {
        int64_t last = static_cast<int64_t>(divisors.size()) - 1;
        while (last >= 1 && divisors[last] * tiles[y] > max_innermost) --last;
        if (last == 0) {
          if (n <= 2) break;  // the only other factor is the full innermost one
          continue;
        }
        d = divisors[rng.SampleInt(1, last + 1)];
      }
      tiles[x] /= d;
      tiles[y] *= d;
      return trace.WithDecision(index, nlohmann::json(tiles), /*remove_postproc=*/true);
    }
    *why = "tile " + trace.GetDecision(index)->dump() +
           ": no factor can move without exceeding the innermost limit " +
           std::to_string(max_innermost);
    return std::nullopt;
  }

};

}  // namespace

MutatorPtr MakeMutateTileSize() { return std::make_shared<MutateTileSize>(); }

}  // namespace kiln::search
