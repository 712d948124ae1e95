#include "search/search_strategy.h"

#include <stdexcept>

namespace kiln::search {

const char* StrategyKindName(StrategyKind k) {
  switch (k) {
    case StrategyKind::kReplay:
      return "replay";
    case StrategyKind::kEvolutionary:
      return "evolutionary";
  }
  return "?";
}

StrategyKind ParseStrategyKind(const std::string& name) {
  if (name == "replay") return StrategyKind::kReplay;
  if (name == "evolutionary") return StrategyKind::kEvolutionary;
  throw std::invalid_argument("unknown search strategy '" + name +
                              "' (expected 'evolutionary' or 'replay')");
}

}  // namespace kiln::search
