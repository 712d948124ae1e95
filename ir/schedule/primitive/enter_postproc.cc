// enter_postproc: a marker; what follows it in a trace is postprocessing,
// which the search drops and re-runs after mutating decisions.
#include "ir/schedule/inst_args.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/schedule.h"

namespace kiln::ir {

void Schedule::EnterPostproc() { Record("EnterPostproc", {}, nlohmann::json::array(), {}); }

namespace kinds {

const InstructionKind& EnterPostproc() {
  static const InstructionKind k{
      "EnterPostproc", /*is_pure=*/false, /*has_decision=*/false,
      [](Schedule& sch, const std::vector<InstArg>& in, const nlohmann::json& attrs,
         const nlohmann::json*) -> std::vector<RVRef> {
        inst::ExpectInputs("EnterPostproc", in, 0);
        inst::ExpectAttrs("EnterPostproc", attrs, 0);
        sch.EnterPostproc();
        return {};
      },
      [](const std::vector<std::string>&, const std::vector<std::string>&, const nlohmann::json&,
         const nlohmann::json*) { return std::string("sch.enter_postproc()"); },
      nullptr};
  return k;
}

}  // namespace kinds
}  // namespace kiln::ir
