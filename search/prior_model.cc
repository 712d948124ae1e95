#include "search/prior_model.h"

#include <exception>

#include "codegen/target_features.h"
#include "cost_model/xgb_model.h"

namespace kiln::search {

AutoPrior ChooseAutoPrior(const std::vector<std::string>& model_files, const ir::Target& target) {
  std::string refused;
  for (const std::string& file : model_files) {
    std::string why;
    try {
      const cost_model::XGBModel m = cost_model::XGBModel::Load(file);
      if (!m.trained()) {
        why = "holds an untrained model";
      } else if (m.trained_target().empty()) {
        why = "does not record the target it was trained for";
      } else {
        const ir::Target trained = ir::Target::Parse(m.trained_target());
        if (codegen::SameVectorUnits(trained, target, &why)) {
          return {file, "trained on '" + m.trained_target() + "', the same vector units as '" +
                            target.ToString() + "'"};
        }
      }
    } catch (const std::exception& e) {
      why = e.what();
    }
    refused += (refused.empty() ? "" : "; ") + file + ": " + why;
  }
  return {"", model_files.empty() ? "no model in configs/models/"
                                  : "no model of configs/models/ suits '" + target.ToString() +
                                        "' (" + refused + ")"};
}

}  // namespace kiln::search
