// MutateUnroll (TVM's, docs/ARCHITECTURE.md §6): pick one root annotation of an unroll
// step (meta_schedule.unroll_explicit / _implicit) whose value a
// SampleCategorical drew, and redraw that categorical from its
// probabilities without its current value.
#include <algorithm>

#include "search/annotations.h"
#include "search/mutator.h"
#include "search/mutator/redraw_categorical.h"

namespace kiln::search {
namespace {

class MutateUnroll : public Mutator {
 public:
  std::string Name() const override { return "MutateUnroll"; }

  std::optional<ir::Trace> Apply(const ir::Trace& trace, ir::RandomEngine& rng,
                                 std::string* why) const override {
    const size_t end = trace.PostprocIndex();
    std::vector<size_t> annotations;
    for (size_t i = 0; i < end; ++i) {
      const ir::Instruction& inst = trace.insts()[i];
      if (inst.kind != "Annotate" || inst.attrs.size() != 1 || inst.inputs.size() != 2) continue;
      if (inst.attrs[0] != ann::kUnrollExplicit && inst.attrs[0] != ann::kUnrollImplicit) continue;
      if (inst.inputs[1].kind == ir::InstArg::Kind::kRV) annotations.push_back(i);
    }
    if (annotations.empty()) {
      *why = "no unroll step annotation drawn by a SampleCategorical";
      return std::nullopt;
    }
    const ir::Instruction& ann = trace.insts()[annotations[rng.SampleInt(
        0, static_cast<int64_t>(annotations.size()))]];
    const ir::RVRef value = ann.inputs[1].rv;
    std::optional<size_t> sampler;
    for (size_t i = 0; i < end; ++i) {
      const ir::Instruction& inst = trace.insts()[i];
      if (inst.kind == "SampleCategorical" && inst.outputs.size() == 1 && inst.outputs[0] == value) {
        sampler = i;
      }
    }
    std::optional<nlohmann::json> decision;
    if (sampler) decision = trace.GetDecision(*sampler);
    if (!sampler || !decision) {
      *why = "the unroll step was not drawn by a SampleCategorical with a decision";
      return std::nullopt;
    }
    const size_t values = trace.insts()[*sampler].attrs[1].size();
    const int64_t current = decision->get<int64_t>();
    if (values <= 1 || current < 0 || current >= static_cast<int64_t>(values)) {
      *why = "the unroll step has no other value to take";
      return std::nullopt;
    }
    return RedrawCategorical(trace, *sampler, rng, "unroll step", why);
  }
};

}  // namespace

MutatorPtr MakeMutateUnroll() { return std::make_shared<MutateUnroll>(); }

}  // namespace kiln::search
