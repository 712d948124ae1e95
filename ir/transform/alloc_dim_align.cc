#include "ir/transform/alloc_dim_align.h"

#include <nlohmann/json.hpp>

#include "ir/error.h"

namespace kiln::ir::transform {

std::vector<DimAlign> ReadDimAligns(const BlockNode& block, const std::string& key) {
  auto it = block.annotations.find(key);
  if (it == block.annotations.end()) return {};
  auto fail = [&]() {
    throw IRError("lowering: block '" + block.name + "' has a \"" + key +
                  "\" annotation that is not a list of 4-integer lists");
  };
  const auto* s = it->second.as<StringImmNode>();
  if (!s) fail();
  nlohmann::json j = nlohmann::json::parse(s->value, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) fail();
  std::vector<DimAlign> out;
  for (const auto& t : j) {
    if (!t.is_array() || t.size() != 4) fail();
    for (const auto& x : t) {
      if (!x.is_number_integer()) fail();
    }
    out.push_back({t[0].get<int64_t>(), t[1].get<int64_t>(), t[2].get<int64_t>(),
                   t[3].get<int64_t>()});
  }
  return out;
}

std::string DimAlignsText(const std::vector<DimAlign>& aligns) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& a : aligns) j.push_back({a.index, a.axis, a.factor, a.offset});
  return j.dump();
}

}  // namespace kiln::ir::transform
