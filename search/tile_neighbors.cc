#include "search/tile_neighbors.h"

#include <cstddef>
#include <cstdint>
#include <optional>

namespace kiln::search {
namespace {

int64_t SmallestPrimeFactor(int64_t v) {
  for (int64_t p = 2; p * p <= v; ++p) {
    if (v % p == 0) return p;
  }
  return v;
}

struct TileSite {
  size_t index;                // of the instruction in the trace
  std::vector<int64_t> tile;   // its decision, outermost level first
  int64_t max_innermost = -1;  // the sampler's bound on the last level (-1: none)
};

// `site`'s tile with one prime factor moved from level `from` to the
// adjacent level `to`, or nothing when `from` holds no factor or the move
// breaks the innermost bound.
std::optional<std::vector<int64_t>> Moved(const TileSite& site, size_t from, size_t to) {
  if (site.tile[from] <= 1) return std::nullopt;
  std::vector<int64_t> t = site.tile;
  const int64_t p = SmallestPrimeFactor(t[from]);
  t[from] /= p;
  t[to] *= p;
  if (site.max_innermost > 0 && t.back() > site.max_innermost) return std::nullopt;
  return t;
}

}  // namespace

std::vector<ir::Trace> TileNeighbors(const ir::Trace& trace) {
  std::vector<TileSite> sites;
  const size_t end = trace.PostprocIndex();
  for (size_t i = 0; i < end; ++i) {
    const ir::Instruction& inst = trace.insts()[i];
    if (inst.kind != "SamplePerfectTile") continue;
    const std::optional<nlohmann::json> d = trace.GetDecision(i);
    if (!d || !d->is_array() || d->size() < 2) continue;
    TileSite site{i, {}, -1};
    for (const nlohmann::json& v : *d) {
      if (!v.is_number_integer() || v.get<int64_t>() < 1) break;
      site.tile.push_back(v.get<int64_t>());
    }
    if (site.tile.size() != d->size()) continue;  // not a tile decision: leave it alone
    if (inst.attrs.size() == 2 && inst.attrs[1].is_number_integer()) {
      site.max_innermost = inst.attrs[1].get<int64_t>();
    }
    sites.push_back(std::move(site));
  }
  std::vector<ir::Trace> out;
  // Rank r: pair number r / 2 counted from the innermost, growing its inner
  // level when r is even, shrinking it when odd.
  for (size_t rank = 0;; ++rank) {
    bool any = false;
    for (const TileSite& s : sites) {
      const size_t pair = rank / 2;
      if (pair + 1 >= s.tile.size()) continue;
      any = true;
      const size_t inner = s.tile.size() - 1 - pair;
      const size_t outer = inner - 1;
      const std::optional<std::vector<int64_t>> t =
          rank % 2 == 0 ? Moved(s, outer, inner) : Moved(s, inner, outer);
      if (t)
        out.push_back(trace.WithDecision(s.index, nlohmann::json(*t), /*remove_postproc=*/true));
    }
    if (!any) break;
  }
  return out;
}

}  // namespace kiln::search
