// Where a field is in a JSON text: Protobuf's JSON parser names the field it
// refuses ("workloads[0].wieght: Cannot find field.") but not its position,
// and a config error should give the line.
#pragma once

#include <string>
#include <string_view>

namespace kiln::config {

// The 1-based line of the key at `path` ("timing.numbr", "workloads[1].spec",
// "cores") in JSON `text`, or 0 when it is not there. Keys compare with
// underscores removed and case folded, since Protobuf accepts both
// "trials_per_iter" and "trialsPerIter".
int LineOfJsonPath(std::string_view text, const std::string& path);

// The 1-based line of byte `offset` in `text`.
int LineOfOffset(std::string_view text, size_t offset);

}  // namespace kiln::config
