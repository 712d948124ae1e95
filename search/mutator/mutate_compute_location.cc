// MutateComputeLocation (TVM's, docs/ARCHITECTURE.md §6): replay the trace and, at
// every SampleComputeLocation, ask the schedule as it stands where the block
// could go; among the instructions with an alternative to their current
// decision pick one uniformly, and a new location uniformly among its
// alternatives. The workload is kept as a tree (TVM re-parses it from JSON
// on every call).
#include "ir/schedule/schedule.h"
#include "search/mutator.h"
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
    struct Site {
      size_t index;
      std::vector<int64_t> alternatives;
    };
    std::vector<Site> sites;
    ir::Schedule sch(workload_, rng.ForkSeed());
    const ir::Instruction* first = trace.insts().empty() ? nullptr : &trace.insts()[0];
    auto provider = [&](const ir::Instruction& inst, const std::vector<ir::InstArg>& inputs,
                        const std::optional<nlohmann::json>& recorded)
        -> std::optional<nlohmann::json> {
      if (inst.kind != "SampleComputeLocation" || !recorded || inputs.size() != 1 ||
          inputs[0].kind != ir::InstArg::Kind::kRV) {
        return recorded;
      }
      const int64_t current = recorded->get<int64_t>();
      std::vector<int64_t> alternatives;
      for (int64_t loc : sch.ComputeLocationCandidates(ir::BlockRV{inputs[0].rv.id})) {
        if (loc != current) alternatives.push_back(loc);
      }
      if (!alternatives.empty()) {
        sites.push_back({static_cast<size_t>(&inst - first), std::move(alternatives)});
      }
      return recorded;
    };
    try {
      trace.ApplyToSchedule(&sch, /*remove_postproc=*/true, provider);
    } catch (const std::exception& e) {
      *why = std::string("the trace does not replay: ") + e.what();
      return std::nullopt;
    }
    if (sites.empty()) {
      *why = "no compute location has an alternative";
      return std::nullopt;
    }
    const Site& site = sites[rng.SampleInt(0, static_cast<int64_t>(sites.size()))];
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
