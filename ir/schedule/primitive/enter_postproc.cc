// enter_postproc: a marker; what follows it in a trace is postprocessing,
// which the search drops and re-runs after mutating decisions.
#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/schedule.h"

namespace kiln::ir {

void Schedule::EnterPostproc() {
  Record(instruction_kinds::EnterPostproc().name, {}, nlohmann::json::array(), {});
}

namespace instruction_kinds {

const InstructionKind& EnterPostproc() {
  static const InstructionKind k = kind_definition::DefineKind(
      "EnterPostproc", {},
      [](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(0);
        a.ExpectAttrs(0);
        sch.EnterPostproc();
        return {};
      },
      [](kind_definition::PyCall&) {});
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
