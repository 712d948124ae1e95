#include "search/structural_neighbors.h"

#include <cstdint>
#include <exception>

#include "ir/schedule/schedule.h"

namespace kiln::search {

std::vector<DecisionSite> StructuralDecisionSites(const ir::PrimFunc& workload,
                                                  const ir::Trace& trace, int64_t seed) {
  std::vector<DecisionSite> sites;
  ir::Schedule sch(workload, seed);
  const ir::Instruction* first = trace.insts().empty() ? nullptr : &trace.insts()[0];
  auto provider =
      [&](const ir::Instruction& inst, const std::vector<ir::InstArg>& inputs,
          const std::optional<nlohmann::json>& recorded) -> std::optional<nlohmann::json> {
    if (!recorded || !recorded->is_number_integer()) return recorded;
    const int64_t current = recorded->get<int64_t>();
    DecisionSite site{static_cast<size_t>(&inst - first), inst.kind, {}};
    if (inst.kind == "SampleComputeLocation" && inputs.size() == 1 &&
        inputs[0].kind == ir::InstArg::Kind::kRV) {
      // Where the block can go in the schedule as it stands at this point.
      for (int64_t loc : sch.ComputeLocationCandidates(ir::BlockRV{inputs[0].rv.id})) {
        if (loc != current) site.alternatives.push_back(loc);
      }
    } else if (inst.kind == "SampleCategorical" && inst.attrs.size() == 2 &&
               inst.attrs[1].is_array()) {
      const nlohmann::json& probs = inst.attrs[1];
      for (size_t v = 0; v < probs.size(); ++v) {
        if (static_cast<int64_t>(v) != current && probs[v].is_number() &&
            probs[v].get<double>() > 0) {
          site.alternatives.push_back(static_cast<int64_t>(v));
        }
      }
    }
    if (!site.alternatives.empty()) sites.push_back(std::move(site));
    return recorded;
  };
  trace.ApplyToSchedule(&sch, /*remove_postproc=*/true, provider);
  return sites;
}

std::vector<ir::Trace> StructuralNeighbors(const ir::PrimFunc& workload, const ir::Trace& trace) {
  std::vector<DecisionSite> sites;
  try {
    sites = StructuralDecisionSites(workload, trace);
  } catch (const std::exception&) {
    return {};
  }
  std::vector<ir::Trace> out;
  for (size_t rank = 0;; ++rank) {
    bool any = false;
    for (const DecisionSite& s : sites) {
      if (rank >= s.alternatives.size()) continue;
      any = true;
      out.push_back(trace.WithDecision(s.index, nlohmann::json(s.alternatives[rank]),
                                       /*remove_postproc=*/true));
    }
    if (!any) break;
  }
  return out;
}

}  // namespace kiln::search
