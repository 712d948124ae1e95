// enter_postproc: a marker; what follows it in a trace is postprocessing,
// which the search drops and re-runs after mutating decisions.
#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/schedule.h"

namespace kiln::ir {

void Schedule::EnterPostproc() { Record(kinds::EnterPostproc().name, {}, nlohmann::json::array(), {}); }

namespace kinds {

const InstructionKind& EnterPostproc() {
  static const InstructionKind k = inst::DefineKind(
      "EnterPostproc", {},
      [](Schedule& sch, const inst::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(0);
        a.ExpectAttrs(0);
        sch.EnterPostproc();
        return {};
      },
      [](inst::PyCall&) {});
  return k;
}

}  // namespace kinds
}  // namespace kiln::ir
