#include "ir/text/dialect.h"

#include <string_view>
#include <unordered_map>

namespace kiln::ir::text {

std::string CanonicalTName(const std::string& name) {
  static const std::unordered_map<std::string, std::string> kNewer = {
      {"sblock", "block"},
      {"sblock_alloc_buffer", "alloc_buffer"},
      {"sblock_attr", "block_attr"},
  };
  auto it = kNewer.find(name);
  return it == kNewer.end() ? name : it->second;
}

std::string CanonicalAttrKey(const std::string& key) {
  constexpr std::string_view kNewPrefix = "tirx.";
  if (key.rfind(kNewPrefix, 0) == 0) return "tir." + key.substr(kNewPrefix.size());
  return key;
}

bool IsKnownPrimFuncFlag(const std::string& name) {
  return name == "private" || name == "check_well_formed" || name == "s_tir";
}

}  // namespace kiln::ir::text
