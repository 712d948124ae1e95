// Job files for `kiln submit --job FILE`: a kiln.v1.TuningJob
// (proto/kiln/v1/job.proto) in Protobuf text format (.textproto, .txtpb,
// .pbtxt) or its JSON mapping (.json). Protobuf does the parsing, so a field
// that does not exist or a value of the wrong type is refused; the error
// names the file, the line and the field.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "kiln/v1/job.pb.h"

namespace kiln::rpc::farm {

class JobFileError : public std::runtime_error {
 public:
  explicit JobFileError(const std::string& msg) : std::runtime_error(msg) {}
};

enum class JobFileFormat { kText, kJson };

// Reads and parses a job file, picking the format by extension (.json is
// JSON; anything else is text format). Throws JobFileError.
v1::TuningJob ParseJobFile(const std::string& path);
// `name` is what errors call the input ("job.json").
v1::TuningJob ParseJobText(std::string_view text, JobFileFormat format, const std::string& name);

// Checks what Protobuf cannot: at least one workload, trials >= 1, weights
// >= 0 and not all zero, a known strategy, a plausible timing, a target.
// Throws JobFileError naming the field ("trials: 0; must be at least 1").
void ValidateJob(const v1::TuningJob& job);

}  // namespace kiln::rpc::farm
