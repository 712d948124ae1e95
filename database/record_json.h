// TuningRecord <-> JSON, the record line of the export format (FORMAT.md).
#pragma once

#include <nlohmann/json.hpp>

#include "database/record.h"

namespace kiln::database {

nlohmann::json ArgsToJson(const std::vector<ArgInfo>& args);
std::vector<ArgInfo> ArgsFromJson(const nlohmann::json& j);
nlohmann::json RecordToJson(const TuningRecord& r);
// Throws nlohmann::json::exception naming the missing or mistyped field.
TuningRecord RecordFromJson(const nlohmann::json& j);

}  // namespace kiln::database
