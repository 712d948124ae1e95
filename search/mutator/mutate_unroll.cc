// MutateUnroll (TVM's, docs/ARCHITECTURE.md §6): pick one root annotation of an unroll
// step (meta_schedule.unroll_explicit / _implicit) whose value a
// SampleCategorical drew, and redraw that categorical from its
// probabilities without its current value.
#include <algorithm>

#include "search/annotations.h"
#include "search/mutator.h"

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
    std::vector<double> probs = trace.insts()[*sampler].attrs[1].get<std::vector<double>>();
    const int64_t current = decision->get<int64_t>();
    if (probs.size() <= 1 || current < 0 || current >= static_cast<int64_t>(probs.size())) {
      *why = "the unroll step has no other value to take";
      return std::nullopt;
    }
    probs.erase(probs.begin() + current);
    double total = 0;
    for (double p : probs) total += p;
    if (!(total > 0)) {
      *why = "every other unroll step has probability 0";
      return std::nullopt;
    }
    int64_t next = rng.SampleCategorical(probs);
    if (next >= current) ++next;
    return trace.WithDecision(*sampler, nlohmann::json(next), /*remove_postproc=*/true);
  }
};

}  // namespace

MutatorPtr MakeMutateUnroll() { return std::make_shared<MutateUnroll>(); }

}  // namespace kiln::search
