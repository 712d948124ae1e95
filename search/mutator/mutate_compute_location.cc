// MutateComputeLocation (TVM's, docs/ARCHITECTURE.md §6): replay the trace and, at
// every SampleComputeLocation, ask the schedule as it stands where the block
// could go (StructuralDecisionSites, search/structural_neighbors.h); among
// the instructions with an alternative to their current decision pick one
// uniformly, and a new location uniformly among its alternatives. The
// workload is kept as a tree (TVM re-parses it from JSON on every call).
#include "search/mutator.h"
#include "search/structural_neighbors.h"
#include "search/tune_context.h"

namespace kiln::search {
namespace {

class MutateComputeLocation : public Mutator {
 public:
  std::string Name() const override { return "MutateComputeLocation"; }
  void Initialize(const TuneContext& ctx) override { workload_ = ctx.workload; }

  std::optional<ir::Trace> Apply(const ir::Trace& trace, ir::RandomEngine& rng,
                                 std::string* why) const override {
    if (!workload_.body.defined()) {
      *why = "the mutator was not initialized with a tune context";
      return std::nullopt;
    }
    std::vector<DecisionSite> sites;
    try {
      // The schedule's seed is drawn as before, so that the stream of draws
      // after it stays the same.
      sites = StructuralDecisionSites(workload_, trace, rng.ForkSeed());
    } catch (const std::exception& e) {
      *why = std::string("the trace does not replay: ") + e.what();
      return std::nullopt;
    }
    std::erase_if(sites, [](const DecisionSite& s) { return s.kind != "SampleComputeLocation"; });
    if (sites.empty()) {
      *why = "no compute location has an alternative";
      return std::nullopt;
    }
    const DecisionSite& site = sites[rng.SampleInt(0, static_cast<int64_t>(sites.size()))];
    const int64_t loc =
        site.alternatives[rng.SampleInt(0, static_cast<int64_t>(site.alternatives.size()))];
    return trace.WithDecision(site.index, nlohmann::json(loc), /*remove_postproc=*/true);
  }

 private:
  ir::PrimFunc workload_;
};

}  // namespace

MutatorPtr MakeMutateComputeLocation() { return std::make_shared<MutateComputeLocation>(); }

}  // namespace kiln::search
